import { InsertSeqs } from './insert-seqs';

describe('InsertSeqs', () => {
  it('commits a seq only once every INSERT at or below it has finished, in whatever order they finish', () => {
    const seqs = new InsertSeqs();
    seqs.continueAfter(10);
    const [a, b, c] = [seqs.begin(), seqs.begin(), seqs.begin()];
    expect([a, b, c, seqs.latest]).toEqual([11, 12, 13, 13]);
    expect(seqs.committed).toBe(10);
    seqs.end(b);
    expect(seqs.committed).toBe(10);
    seqs.end(a);
    expect(seqs.committed).toBe(12);
    seqs.end(c);
    expect(seqs.committed).toBe(13);
  });

  it('settles a seq when the INSERTs up to it finish, not waiting for later ones', async () => {
    const seqs = new InsertSeqs();
    const first = seqs.begin();
    const target = seqs.latest;
    const later = seqs.begin();
    let settled = false;
    const waiting = seqs.settled(target).then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    seqs.end(first);
    await waiting;
    expect(settled).toBe(true);
    seqs.end(later);
    await seqs.settled(seqs.latest); // nothing running: at once
  });
});
