import { modelSettingsView } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

/** The model's settings and its API key (the key is written, never read back). */
export function modelHandlers({ modelSettings, apiKey }: Pick<DaemonParts, 'modelSettings' | 'apiKey'>): Pick<Handlers, 'model.getSettings' | 'model.setSettings' | 'model.setKey'> {
  const view = (): ReturnType<typeof modelSettingsView> => modelSettingsView(modelSettings.settings, apiKey.source);
  return {
    'model.getSettings': () => ({ settings: view() }),
    'model.setSettings': async (params) => {
      await modelSettings.update(params);
      return { settings: view() };
    },
    'model.setKey': async (params) => {
      await apiKey.set(params.storage, params.value);
      return { settings: view() };
    },
  };
}
