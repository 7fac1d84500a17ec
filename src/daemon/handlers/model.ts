import { modelSettingsView } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

/** The model's settings and its API key (the key is written, never read back). */
export function modelHandlers({ modelSettings, apiKey, events }: Pick<DaemonParts, 'modelSettings' | 'apiKey' | 'events'>): Pick<Handlers, 'model.getSettings' | 'model.setSettings' | 'model.setKey'> {
  const view = (): ReturnType<typeof modelSettingsView> => modelSettingsView(modelSettings.settings, apiKey.source);
  // Announced, so what follows the settings (the gateway's deferred tools) changes without asking again.
  const changed = (): { settings: ReturnType<typeof modelSettingsView> } => {
    const settings = view();
    events.emit({ type: 'model.settings', settings });
    return { settings };
  };
  return {
    'model.getSettings': () => ({ settings: view() }),
    'model.setSettings': async (params) => {
      await modelSettings.update(params);
      return changed();
    },
    'model.setKey': async (params) => {
      await apiKey.set(params.storage, params.value);
      return changed();
    },
  };
}
