"""How one embedding call's windows are packed into decodes, and the packs dealt to the lanes.

Several short inputs share one decode (llama.cpp evaluates them as separate sequences of one
batch). On CPU llama.cpp's flash attention walks a decode in tiles of 64 query rows by 64 key rows
(``GGML_FA_TILE_Q`` / ``GGML_FA_TILE_KV``): a tile pair whose mask is all "other sequence" is
skipped, any other is computed whole. A sequence that crosses a multiple of 64 in the decode makes
two more pairs to compute, for a few of its rows. So packs are built of *blocks* that fill whole
tiles exactly -- short windows whose tokens sum to 64, or a long window with short ones making it
up to a multiple of 64 -- and what fits no block goes where a tile starts, last in a pack (so no
later window starts mid-tile), or into packs of its own. Measured on the default model (issue 43, docs/benchmarks.md,
"Indexing throughput"): a decode of four sequences of 64 tokens costs 8% less than one of six of
about 43; on the synthetic workspace's units, blocks in packs of 128 tokens cost 8-9% less CPU a
unit than packs of 256 filled longest first.

Which sequences share a decode changes a vector by rounding only (llama.cpp's matrix kernels take
other paths for other row counts: cosine 0.9999 between packings), as it did before.
"""

from __future__ import annotations

from collections.abc import Sequence

# llama.cpp's CPU flash attention tile (query rows and key rows alike).
TILE = 64


def _subset(counts: dict[int, list[int]], target: int) -> list[int] | None:
    """Lengths, repeats allowed up to how many windows have each, summing to exactly ``target``;
    None if none do. Subset sum over bitsets: a sum is bit ``s`` of an int."""
    if target == 0:
        return []
    items: list[int] = []
    for length in sorted(counts, reverse=True):  # longest first: fewer windows a block
        if 0 < length <= target:
            items += [length] * min(len(counts[length]), target // length)
    mask = (1 << (target + 1)) - 1
    reach = [1]  # reach[k]: the sums reachable with items[:k]
    for length in items:
        reach.append((reach[-1] | (reach[-1] << length)) & mask)
        if reach[-1] >> target & 1:
            break
    else:
        return None
    picks: list[int] = []
    left = target
    for k in range(len(reach) - 1, 0, -1):
        if left and not reach[k - 1] >> left & 1:  # reaching ``left`` needs items[k - 1]
            picks.append(items[k - 1])
            left -= items[k - 1]
    return picks


def pack(
    order: Sequence[int],
    lengths: Sequence[int],
    *,
    pack_tokens: int,
    seq_max: int,
    limit: int,
    tile: int = TILE,
) -> list[list[int]]:
    """The windows ``order`` (longest first) as decodes: each a list of window indices, in the
    order they sit in the decode. A decode holds at most ``seq_max`` windows and ``pack_tokens``
    tokens, unless one window (with the short ones making up its last tile, within ``limit``
    tokens) is longer. ``tile`` 0: packs filled longest first, as before tiles were counted."""
    if tile <= 0:
        return _greedy(list(order), lengths, pack_tokens, seq_max)
    blocks, loose = _blocks(order, lengths, tile=tile, seq_max=seq_max, limit=limit)
    packs: list[list[int]] = []
    used: list[int] = []  # tokens of each pack
    for block in blocks:
        n = sum(lengths[w] for w in block)
        if packs and used[-1] + n <= pack_tokens and len(packs[-1]) + len(block) <= seq_max:
            packs[-1] += block
            used[-1] += n
        else:
            packs.append(list(block))
            used.append(n)
    rest: list[int] = []
    for w in sorted(loose, key=lambda w: -lengths[w]):
        for k, p in enumerate(packs):
            if used[k] % tile == 0 and used[k] + lengths[w] <= pack_tokens and len(p) < seq_max:
                p.append(w)  # starts a tile; last, so no later window starts mid-tile
                used[k] += lengths[w]
                break
        else:
            rest.append(w)
    return packs + _greedy(rest, lengths, pack_tokens, seq_max)


def _blocks(
    order: Sequence[int], lengths: Sequence[int], *, tile: int, seq_max: int, limit: int
) -> tuple[list[list[int]], list[int]]:
    """Blocks of windows that fill whole tiles exactly (a long window and short ones making up
    its last tile; short ones summing to one tile), and the windows left loose."""
    shorts: dict[int, list[int]] = {}  # length -> windows
    for w in order:
        if lengths[w] < tile:
            shorts.setdefault(lengths[w], []).append(w)

    def take(target: int, most: int) -> list[int] | None:
        """Short windows summing to ``target``, at most ``most`` of them, taken out of
        ``shorts``; None (and nothing taken) if there are none."""
        got = _subset(shorts, target)
        if got is None or len(got) > most:
            return None
        out = []
        for length in got:
            out.append(shorts[length].pop())
            if not shorts[length]:
                del shorts[length]
        return out

    blocks: list[list[int]] = []
    loose: list[int] = []
    for w in order:
        if lengths[w] < tile:
            continue
        room = -lengths[w] % tile
        fill = take(room, seq_max - 1) if lengths[w] + room <= limit else None
        if fill is None:
            loose.append(w)
        else:
            blocks.append([w, *fill])
    while shorts:
        first_len = max(shorts)
        first = shorts[first_len].pop()
        if not shorts[first_len]:
            del shorts[first_len]
        rest = take(tile - first_len, seq_max - 1)
        if rest is None:
            loose.append(first)
        else:
            blocks.append([first, *rest])
    return blocks, loose


def _greedy(
    order: list[int], lengths: Sequence[int], pack_tokens: int, seq_max: int
) -> list[list[int]]:
    """Windows in the given order, each pack filled until the next would not fit."""
    packs: list[list[int]] = []
    group: list[int] = []
    used = 0
    for w in order:
        if group and (used + lengths[w] > pack_tokens or len(group) >= seq_max):
            packs.append(group)
            group, used = [], 0
        group.append(w)
        used += lengths[w]
    if group:
        packs.append(group)
    return packs


def deal(packs: list[list[int]], lengths: Sequence[int], lanes: int) -> list[list[list[int]]]:
    """The packs dealt to ``lanes`` lanes, the largest first, each to the lane with the fewest
    tokens so far: the lanes finish together, within about one pack (a lane that finishes early
    takes another's last pack, ``LlamaEmbedder._decode_all``)."""
    loads = [0] * lanes
    shares: list[list[list[int]]] = [[] for _ in range(lanes)]
    for p in sorted(packs, key=lambda p: -sum(lengths[w] for w in p)):
        k = loads.index(min(loads))
        shares[k].append(p)
        loads[k] += sum(lengths[w] for w in p)
    return [s for s in shares if s]
