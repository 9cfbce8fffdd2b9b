#!/usr/bin/env node
import '../dist/cli/pilot-agent.js';
