"""Tests of the dispatch core (a package, so module names cannot clash with other test folders)."""
