/**
 * A first-in first-out queue with O(1) shift. `Array.prototype.shift` moves every element:
 * on the event history (2,048 entries, one shift per event once full) that was the single
 * largest cost of emitting an event.
 */
export class Queue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item, removed; undefined when empty. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    // Compact once the dead prefix is as long as what is live: amortised O(1).
    if (this.head >= 64 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** The oldest item, kept. */
  peek(): T | undefined {
    return this.items[this.head];
  }

  /** The items, oldest first. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i] as T;
  }
}
