//go:build !linux

package main

// releaseStartPagesLater does nothing: releasing the start-up pages
// (startpages_linux.go) is Linux's MADV_PAGEOUT.
func releaseStartPagesLater() {}
