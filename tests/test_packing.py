"""Packs of whole attention tiles (embedders/packing.py): every window decoded once, in packs
that fit, and no short window crossing a tile boundary where the windows can fill tiles."""

from __future__ import annotations

import random

import pytest

from clawmem.embedders import packing


def _crossings(packs: list[list[int]], lengths: list[int], tile: int = packing.TILE) -> list:
    """Windows shorter than a tile (a longer one crosses anyway) that cross a multiple of
    ``tile`` inside their decode."""
    out = []
    for p in packs:
        start = 0
        for w in p:
            end = start + lengths[w]
            if start // tile != (end - 1) // tile and lengths[w] < tile:
                out.append((w, start, end))
            start = end
    return out


def _order(lengths: list[int]) -> list[int]:
    return sorted(range(len(lengths)), key=lambda w: -lengths[w])


@pytest.mark.parametrize("seed", range(200))
def test_every_window_once_in_packs_that_fit(seed):
    r = random.Random(seed)
    lengths = [
        r.choice([r.randint(3, 63), r.randint(3, 63), r.randint(64, 512)])
        for _ in range(r.randint(1, 90))
    ]
    for pack_tokens in (64, 128, 256):
        for tile in (0, packing.TILE):
            packs = packing.pack(
                _order(lengths), lengths, pack_tokens=pack_tokens, seq_max=16, limit=512, tile=tile
            )
            assert sorted(w for p in packs for w in p) == list(range(len(lengths)))
            for p in packs:
                tokens = sum(lengths[w] for w in p)
                assert 1 <= len(p) <= 16
                assert tokens <= 512
                if tokens > pack_tokens:  # only a long window (and its last tile's fill)
                    assert max(lengths[w] for w in p) >= packing.TILE or len(p) == 1
            for lanes in (2, 3):
                shares = packing.deal(packs, lengths, lanes)
                assert sorted(w for s in shares for p in s for w in p) == list(range(len(lengths)))
                loads = [sum(lengths[w] for p in s for w in p) for s in shares]
                if len(shares) == lanes:  # within one pack of each other
                    biggest = max(sum(lengths[w] for w in p) for p in packs)
                    assert max(loads) - min(loads) <= biggest


def test_short_windows_fill_whole_tiles():
    """Windows that can make up whole tiles do, so none crosses a tile boundary of its decode;
    filled longest first (as before), three of them cross one."""
    lengths = [43, 40, 34, 30, 28, 24, 21, 14, 100, 50]
    greedy = packing.pack(_order(lengths), lengths, pack_tokens=128, seq_max=16, limit=512, tile=0)
    assert len(_crossings(greedy, lengths)) == 3
    packs = packing.pack(_order(lengths), lengths, pack_tokens=128, seq_max=16, limit=512)
    assert _crossings(packs, lengths) == []
    # the long window's last tile is made up by short ones: 100 + 28 = 2 tiles
    assert any(sorted(lengths[w] for w in p) == [28, 100] for p in packs)


def test_a_decode_holds_at_most_seq_max_windows():
    lengths = [4] * 48  # sixteen to a tile, but a decode takes at most 8 sequences here
    packs = packing.pack(_order(lengths), lengths, pack_tokens=128, seq_max=8, limit=512)
    assert all(len(p) <= 8 for p in packs)
    assert sorted(w for p in packs for w in p) == list(range(48))


def test_subset_sums_exactly():
    by_length = {30: [0], 20: [1, 2], 9: [3], 5: [4]}
    got = packing._subset(by_length, 34)
    assert got is not None and sum(got) == 34 and sorted(got) == [5, 9, 20]
    assert packing._subset(by_length, 3) is None
    assert packing._subset({20: [1]}, 40) is None  # one window of 20, not two
    assert packing._subset(by_length, 0) == []
