export { Redactor } from './redactor.js';
