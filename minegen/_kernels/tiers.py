"""The tier solver: the difficulty tiers (record_schema_version 2; advisory, opt-in) with F1's
R-infinity as a by-product (``solver.solve`` stays F1's own kernel, the default path).

Visible state (SPEC §5): numbers of revealed non-fog cells, which cells are fog (no number,
known safe), the deduced mines K and, from tier 3 on, the mine count |M|. The true layout
is read only through those and to assert soundness. Rules by tier (``codes.Tier``):

0. cascade: a revealed 0-cell reveals its 8 neighbours (fog included, never from fog); fog:
   a closed fog cell 8-adjacent to R is revealed (fog meta-knowledge, source b);
1. single: r(x) = 0 => U(x) safe; r(x) = |U(x)| => U(x) mines;
2. subset: 0 != U(x) <= U(y) => D = U(y) - U(x) holds r(y) - r(x) mines;
3. global: r_total = |M| - |K| over U_all (closed, not fog, not in K): r_total = 0 => U_all
   safe; r_total = |U_all| => U_all mines;
4. enumerate: the frontier (unknowns of revealed numbered cells) in components joined by
   shared constraints; in each of <= ENUM_CAP cells, a cell safe (a mine) in every
   assignment meeting all its constraints is safe (a mine); larger ones are left alone.

Schedule (the definition the record and the twin ``tests/naive_tiers.py`` share): tier t
starts from tier t-1's fixpoint and repeats {close under every rule below t; one pass of
rule t, all of its deductions read from that one snapshot} until a pass deduces nothing.
F1's R-infinity is tier 1's fixpoint (``single``) or tier 2's (``single_subset``), the
least fixed point of those rules in any order. Tiers 0-3 are monotone (the incremental run
equals a run from R0); tier 4 with its cap is defined by the schedule. Once every safe
cell is open the tiers above F1's are not run (they could only deduce mines). U(x) is an
8-bit mask over the neighbour order of ``board.DX8/DY8`` (``solver.SUBSET_TABLE``).
"""

from numba import njit

from ..codes import ENUM_CAP, F, W8, W32, Defect, Seen, Tier


@njit(cache=True, nogil=True)
def solve_tiers(w, h, work, f1_tier):
    """Run the five tiers from R0 on the attempt's grids in ``work`` (``attempt.workspace``;
    nothing is allocated here); returns a Defect code.

    F1's R-infinity (tier ``f1_tier``'s fixpoint) goes to ``W8.REVEALED`` (0/1) and its counts
    to ``work.cur[F.REVEALED]`` / ``[F.REVEALED_CORE]``; ``W8.TIER`` / ``W8.KNOWN`` get 1 + the
    tier that opened / deduced each cell (0: never); F.SIZE_T0 .. F.TIER4_CAPPED_CELLS get
    each tier's size and own deductions (``record.columns`` derives the tier fields).

    One queue carries both kinds of event (c >= 0 reveals c, -(c + 1) marks c a mine). Rules
    only enqueue, marking the cell at once (nothing is enqueued twice); the consumer alone
    updates masks and counts and lists each changed constraint for the single rule (dirty
    stack) and the subset pass. A rule runs only at a fixpoint of the rules below it, so a
    pass reads one snapshot, and what a pass of the tier's own rule enqueues is its count
    (F.OWN_SAFE_T0 + t). No helper functions (a call with array arguments costs ~8x the solve,
    closures seconds of compile); & and | where both sides are safe to evaluate (fewer
    branches, less compile time). Stale masks are sound: until its event is consumed a
    revealed cell or a marked mine may sit in some U(x) with r(x) counting it, and "U holds
    r mines" stays true.
    """
    n = w * h
    i8 = work.i8
    i32 = work.i32
    nb = work.nb
    trans = work.trans
    popcount = work.popcount
    umask = work.umask
    cons = work.cons
    out = work.cur
    mine = i8[W8.MINE]
    num = i8[W8.NUM]
    fog = i8[W8.FOG]
    r0 = i8[W8.R0]
    opened = i8[W8.TIER]
    known = i8[W8.KNOWN]
    ready = i8[W8.READY]
    indirty = i8[W8.INDIRTY]
    subdirty = i8[W8.SUBDIRTY]
    val = i8[W8.VAL]
    seen = i8[W8.SEEN]
    ncons = i8[W8.NCONS]
    queue = i32[W32.QUEUE]
    dirty = i32[W32.DIRTY]
    sublist = i32[W32.ACTIVE]
    rem = i32[W32.REM]
    pos = i32[W32.POS]
    cells = i32[W32.CELLS]
    cnt = i32[W32.CNT]
    left = i32[W32.LEFT]
    for f in range(F.SIZE_T0, F.TIER4_CAPPED_CELLS + 1):
        out[f] = 0  # tiers not run keep size 0 (record.columns fills them in)
    nmines = 0
    nfog = 0
    qt = 0  # queue tail / head
    for c in range(n):
        known[c] = 0
        ready[c] = 0
        umask[c] = 0
        indirty[c] = 0
        subdirty[c] = 0
        pos[c] = -1
        nmines += mine[c]
        nfog += fog[c]
        opened[c] = r0[c]  # tier 0's mark
        if r0[c]:
            queue[qt] = c
            qt += 1
    nsafe = n - nmines
    qh = 0
    nd = 0  # dirty stack: constraints changed since the single rule saw them
    ns = 0  # subset list: constraints changed since the last subset pass
    nrev = 0  # |R| (fog included), |K| and revealed fog cells, as consumed
    nknown = 0
    nfogrev = 0
    t = Tier.CASCADE  # the tier being computed; what it opens or deduces gets the mark t + 1
    mark = t + 1
    own_events = 0  # deductions of rule t in the passes of tier t (of them, mines)
    own_mines = 0
    capped = 0  # frontier cells of components over ENUM_CAP in the last enumeration pass
    while True:
        # consume events: neighbours' masks, cascade and fog (tier 0), the cell's own
        # constraint, counts
        while qh < qt:
            e = queue[qh]
            qh += 1
            is_mine = e < 0
            c = -e - 1 if is_mine else e
            nknown += is_mine
            nrev += 1 - is_mine
            nfogrev += fog[c]  # (a mine is never fog)
            shown = (not is_mine) & (fog[c] == 0)  # a revealed fog cell shows no number
            zero = shown & (num[c] == 0)  # and never cascades
            m = 0
            r = num[c]
            for j in range(8):
                v = nb[c, j]
                if v < 0:
                    continue
                if ready[v]:
                    bit = 1 << (7 - j)
                    if umask[v] & bit:  # v's constraint changes: list it for the rules
                        umask[v] &= ~bit
                        if is_mine:
                            rem[v] -= 1
                        if indirty[v] == 0:
                            indirty[v] = 1
                            dirty[nd] = v
                            nd += 1
                        if subdirty[v] == 0:
                            subdirty[v] = 1
                            sublist[ns] = v
                            ns += 1
                elif (not is_mine) & (fog[v] != 0) & (opened[v] == 0):  # fog is known safe
                    opened[v] = mark
                    queue[qt] = v
                    qt += 1
                if not shown:
                    continue
                if opened[v] == 0:
                    if zero:  # cascade
                        opened[v] = mark
                        queue[qt] = v
                        qt += 1
                    elif known[v]:
                        r -= 1
                    elif fog[v] == 0:
                        m |= 1 << j
            if shown & (num[c] != 0):  # a numbered cell: its constraint
                umask[c] = m
                rem[c] = r
                ready[c] = 1
                indirty[c] = 1
                dirty[nd] = c
                nd += 1
                subdirty[c] = 1
                sublist[ns] = c
                ns += 1
        q0 = qt  # the rules below enqueue from here; the first one that does ends the round
        rule = t
        # tier 1, single rule: in its own tier one pass over every changed constraint (the
        # snapshot its count is read on), above it one deducing cell at a time (less work)
        if t >= Tier.SINGLE:
            rule = Tier.SINGLE
            while nd > 0:
                nd -= 1
                x = dirty[nd]
                indirty[x] = 0
                u = umask[x]
                if u == 0:
                    continue
                k = popcount[u]
                r = rem[x]
                if (r < 0) | (r > k):
                    return Defect.SOLVER_INCONSISTENT
                if (r == 0) | (r == k):
                    for j in range(8):
                        if u >> j & 1:
                            v = nb[x, j]
                            if (r == 0) & (opened[v] == 0):
                                opened[v] = mark
                                queue[qt] = v
                                qt += 1
                            elif (r == k) & (known[v] == 0):
                                known[v] = mark
                                queue[qt] = -v - 1
                                qt += 1
                    if (t > Tier.SINGLE) & (qt > q0):
                        break
        # tier 2, subset rule: ordered pairs within Chebyshev distance 2 of which at least one
        # changed since the last pass (an unchanged pair has given all it can)
        if (qt == q0) & (t >= Tier.SUBSET):
            rule = Tier.SUBSET
            for iz in range(ns):
                z = sublist[iz]
                subdirty[z] = 0
                if umask[z] == 0:
                    continue
                cx = z % w
                cy = z // w
                for dy in range(-2, 3):
                    yy = cy + dy
                    if (yy < 0) | (yy >= h):
                        continue
                    for dx in range(-2, 3):
                        xx = cx + dx
                        other = yy * w + xx
                        if (xx < 0 or xx >= w or (dx == 0 and dy == 0) or ready[other] == 0
                                or umask[other] == 0):
                            continue
                        for side in range(2):  # z inside the other, then the other inside z
                            x = z if side == 0 else other
                            y = other if side == 0 else z
                            tix = (dy + 2) * 5 + dx + 2 if side == 0 else (2 - dy) * 5 + 2 - dx
                            uy = umask[y]
                            mapped = trans[tix, umask[x]]
                            if (mapped < 0) | ((mapped & ~uy) != 0):
                                continue
                            d = uy & ~mapped
                            if d == 0:
                                continue
                            dm = rem[y] - rem[x]
                            kd = popcount[d]
                            if (dm < 0) | (dm > kd):
                                return Defect.SOLVER_INCONSISTENT
                            if (dm != 0) & (dm != kd):
                                continue
                            for j in range(8):
                                if d >> j & 1:
                                    v = nb[y, j]
                                    if (dm == 0) & (opened[v] == 0):
                                        opened[v] = mark
                                        queue[qt] = v
                                        qt += 1
                                    elif (dm == kd) & (known[v] == 0):
                                        known[v] = mark
                                        queue[qt] = -v - 1
                                        qt += 1
            ns = 0
        # tier 3, global mine count over U_all (closed, not fog, not in K)
        if (qt == q0) & (t >= Tier.GLOBAL):
            rule = Tier.GLOBAL
            uall = n - nrev - nknown - (nfog - nfogrev)
            rtot = nmines - nknown
            if (rtot < 0) | (rtot > uall):
                return Defect.SOLVER_INCONSISTENT
            if (uall > 0) & ((rtot == 0) | (rtot == uall)):
                for v in range(n):
                    if (opened[v] == 0) & (known[v] == 0) & (fog[v] == 0):
                        if rtot == 0:
                            opened[v] = mark
                        else:
                            known[v] = mark
                        queue[qt] = v if rtot == 0 else -v - 1
                        qt += 1
        # tier 4, enumeration of every frontier component up to ENUM_CAP cells
        if (qt == q0) & (t >= Tier.ENUMERATE):
            rule = Tier.ENUMERATE
            capped = 0
            base = 0  # the pass's components are laid out one after another in CELLS
            for x in range(n):
                ux = umask[x]
                if (ready[x] == 0) | (ux == 0):
                    continue
                j0 = 0
                while (ux >> j0 & 1) == 0:
                    j0 += 1
                if pos[nb[x, j0]] >= 0:
                    continue  # its component is done
                # the component, breadth first (cells sharing a constraint); CONS lists the
                # constraints of each position, whose counters are reset
                k = 1
                cells[base] = nb[x, j0]
                pos[cells[base]] = base
                p = base
                while p < base + k:
                    c = cells[p]
                    nc = 0
                    for j in range(8):
                        y = nb[c, j]
                        if (y < 0) | (ready[y] == 0) | ((umask[y] >> (7 - j) & 1) == 0):
                            continue
                        cons[p, nc] = y
                        nc += 1
                        uy = umask[y]
                        cnt[y] = 0
                        left[y] = popcount[uy]
                        for jj in range(8):
                            v = nb[y, jj]
                            if ((uy >> jj & 1) != 0) & (pos[v] < 0):
                                pos[v] = base + k
                                cells[base + k] = v
                                k += 1
                    ncons[p] = nc
                    seen[p] = 0
                    val[p] = -1
                    p += 1
                if k > ENUM_CAP:
                    capped += k
                    base += k
                    continue
                # depth first: each step moves val[p] -1 (none) -> 0 (safe) -> 1 (mine) ->
                # -1 and up a level; a constraint fails once cnt > r or cnt + left < r
                nboth = 0
                nsol = 0
                p = base
                while p >= base:
                    vv = val[p] + 1 if val[p] < 1 else -1
                    val[p] = vv
                    dl = -1 if vv == 0 else (1 if vv < 0 else 0)  # change of left
                    dc = 1 if vv == 1 else (-1 if vv < 0 else 0)  # change of cnt
                    ok = True
                    for q in range(ncons[p]):
                        y = cons[p, q]
                        left[y] += dl
                        cnt[y] += dc
                        ok = ok & (cnt[y] <= rem[y]) & (cnt[y] + left[y] >= rem[y])
                    if vv < 0:
                        p -= 1
                    elif ok & (p < base + k - 1):
                        p += 1
                    elif ok:  # every cell assigned, every constraint met
                        nsol += 1
                        for q in range(base, base + k):
                            sn = seen[q] | (Seen.MINE if val[q] else Seen.SAFE)
                            nboth += (sn != seen[q]) & (sn == Seen.BOTH)
                            seen[q] = sn
                        if nboth == k:
                            break  # every cell can be either: nothing to deduce
                if nsol == 0:
                    return Defect.SOLVER_INCONSISTENT
                for q in range(base, base + k):
                    v = cells[q]
                    if (seen[q] == Seen.SAFE) & (opened[v] == 0):
                        opened[v] = mark
                        queue[qt] = v
                        qt += 1
                    elif (seen[q] == Seen.MINE) & (known[v] == 0):
                        known[v] = mark
                        queue[qt] = -v - 1
                        qt += 1
                base += k
            for q in range(base):
                pos[cells[q]] = -1
        if qt > q0:
            if rule == t:  # the tier's own rule deduced these
                for q in range(q0, qt):
                    own_mines += queue[q] < 0
                own_events += qt - q0
            continue
        # fixpoint of tier t
        out[F.SIZE_T0 + t] = nrev
        out[F.OWN_SAFE_T0 + t] = own_events - own_mines
        out[F.OWN_MINES_T0 + t] = own_mines
        if (t == Tier.ENUMERATE) | ((nrev == nsafe) & (t >= f1_tier)):
            break  # (F1's own tiers always run to the end: its K is exact)
        t += 1
        mark = t + 1
        own_events = 0
        own_mines = 0
    nrev1 = 0
    ncore1 = 0
    revealed = i8[W8.REVEALED]
    for c in range(n):
        o = opened[c]
        if (o != 0) & (mine[c] != 0):
            return Defect.REVEALED_A_MINE
        if (known[c] != 0) & (mine[c] == 0):
            return Defect.DEDUCED_WRONG_MINE
        revealed[c] = 0
        if (o != 0) & (o <= f1_tier + 1):
            revealed[c] = 1
            nrev1 += 1
            ncore1 += 1 - fog[c]
    out[F.REVEALED] = nrev1
    out[F.REVEALED_CORE] = ncore1
    out[F.TIER4_CAPPED_CELLS] = capped
    return Defect.NONE
