#!/usr/bin/env node
import { main } from '../dist/daemon/main.js';

await main(process.argv);
