#!/usr/bin/env node
import '../dist/cli/pilot-discovery.js';
