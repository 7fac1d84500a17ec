/** What a browser does at a login: open the authorization URL, follow its redirect to the loopback callback; the callback page's status and text. */
export async function browse(authorizationUrl: string): Promise<{ status: number; text: string }> {
  const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = authorize.headers.get('location');
  if (location === null) throw new Error(`no redirect from the authorization server (${authorize.status})`);
  const callback = await fetch(location);
  return { status: callback.status, text: await callback.text() };
}
