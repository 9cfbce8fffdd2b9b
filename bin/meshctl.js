#!/usr/bin/env node
import '../dist/cli/meshctl.js';
