import { describe, expect, it } from 'vitest';
import { elicitModes } from '../../../src/gateway/elicit-relay.js';

describe('elicitModes: which of a server\'s elicitations the gateway may offer its client', () => {
  it('reads form mode from an empty capability (2025-06-18) or from form, URL mode only from url', () => {
    expect(elicitModes(undefined)).toEqual({ form: false, url: false });
    expect(elicitModes({})).toEqual({ form: false, url: false });
    expect(elicitModes({ elicitation: {} })).toEqual({ form: true, url: false });
    expect(elicitModes({ elicitation: { form: {} } })).toEqual({ form: true, url: false });
    expect(elicitModes({ elicitation: { url: {} } })).toEqual({ form: false, url: true });
    expect(elicitModes({ elicitation: { form: {}, url: {} } })).toEqual({ form: true, url: true });
  });
});
