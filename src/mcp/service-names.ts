/**
 * Service names and ids live in one namespace for humans: `wispctl` and clients take "a
 * name or an id". So a name may never look like an id (ids are UUIDs from randomUUID), and
 * names are unique regardless of case (`docs` and `DOCS` are one name to a person).
 */
const ID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string has the form of a service id (a UUID, any case). */
export function isIdShaped(name: string): boolean {
  return ID_SHAPE.test(name);
}

/** Names compare without case (they are ASCII: A-Z a-z 0-9 . _ -). */
export function nameKey(name: string): string {
  return name.toLowerCase();
}

export function sameName(a: string, b: string): boolean {
  return nameKey(a) === nameKey(b);
}

export const ID_SHAPED_NAME = 'has the form of a service id (a UUID); ids and names must never be confused, so choose another name';
