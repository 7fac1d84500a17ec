/**
 * How long ago a timestamp was, as a table cell reads it ("40 s ago", "5 min ago", "3 h ago",
 * "2 d ago"): the panel's SINCE column shows this, with the full ISO time on hover, so a
 * row at 1280 px holds a short word instead of 24 characters of timestamp. A time in the
 * future (a clock that moved back) is "just now"; one that does not parse is shown as it is.
 */
export function ageText(iso: string, now: number): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const seconds = Math.max(0, Math.floor((now - at) / 1000));
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} d ago`;
}
