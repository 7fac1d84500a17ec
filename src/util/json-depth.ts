/**
 * Whether `value` nests objects and arrays more than `max` levels deep (`{}` and `[]` are one
 * level, `{"a":[1]}` two, a scalar none). Iterative, so a value a million levels deep is
 * measured without touching the call stack; stops at the first node past `max`.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: { node: object; depth: number }[] = [{ node: value, depth: 1 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.depth > max) return true;
    const children: unknown[] = Array.isArray(top.node) ? top.node : Object.values(top.node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: top.depth + 1 });
    }
  }
  return false;
}
