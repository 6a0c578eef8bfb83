"""Browser tests of the dealer and supervisor screens (Playwright, Debian's Chromium)."""
