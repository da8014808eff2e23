"""Stand-in runtimes for ``test_pool_spares.py`` and ``test_pool_template.py`` (no tests
here): the compromised-worker ``raw`` runtime (unrestricted Python inside a real, confined
worker) under one name per test. Spares and templates are kept per interpreter and
runtime for the whole process, so a name of its own gives each test a spare and a
template no other test made or took."""

from __future__ import annotations

from tests.sandbox.attacks.compromised_worker import raw

adopt = broken = closing = dead = every = refuse = raw
forked = parent = leak = status = lost = plain = exits = stopped = raw
late = paths = leased = dying = ahead = spawned_spare = spawned_no_spare = raw
ruleset_kept = ruleset_off = ruleset_unavailable = unplanned = raw
