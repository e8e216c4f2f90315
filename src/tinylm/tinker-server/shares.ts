/**
 * Fair shares of what `serve --tinker` holds for its clients (results not yet retrieved, sampling
 * sessions). Every client sends the same key, so a bound on the total alone lets one runaway run fill
 * it and lock every other run out. Each thing has an owner (a model, a sampling session, a client
 * session), and one owner holds at most a share of the total: a quarter, so three other runs always
 * find room however one of them behaves. (A key holder who opens many models can still fill the
 * total; the key is the trust boundary, and models are bounded by --tinker-max-models.)
 */

/** How many of the total one owner may hold. */
export const ownerShare = (total: number): number => Math.max(1, Math.floor(total / 4));

/** Things held by key, each with an owner, in the order they were added (oldest first). */
export class Shares<T> {
  private readonly items = new Map<string, { owner: string; value: T }>();
  private readonly perOwner = new Map<string, number>();

  constructor(
    readonly total: number,
    readonly share = ownerShare(total),
  ) {}

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key)?.value;
  }

  /** How many things `owner` holds. */
  held(owner: string): number {
    return this.perOwner.get(owner) ?? 0;
  }

  add(key: string, owner: string, value: T): void {
    this.items.set(key, { owner, value });
    this.perOwner.set(owner, this.held(owner) + 1);
  }

  delete(key: string): void {
    const item = this.items.get(key);
    if (!item) return;
    this.items.delete(key);
    const left = this.held(item.owner) - 1;
    if (left > 0) this.perOwner.set(item.owner, left);
    else this.perOwner.delete(item.owner);
  }

  /**
   * Makes room for one more of `owner`'s by forgetting the oldest thing of whoever has too many: the
   * owner's own past its share, else, when the total is full, the oldest of the owner holding the most.
   * Answers the key forgotten, if any (what hangs on it goes too).
   */
  evictFor(owner: string): string | undefined {
    let victim: string | undefined;
    if (this.held(owner) >= this.share) victim = owner;
    else if (this.items.size >= this.total) victim = [...this.perOwner].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
    if (victim === undefined) return undefined;
    for (const [key, item] of this.items)
      if (item.owner === victim) {
        this.delete(key);
        return key;
      }
    return undefined;
  }
}
