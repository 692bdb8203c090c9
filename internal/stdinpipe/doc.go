// Package stdinpipe enlarges the kernel buffer of a pipe on stdin, so that
// the app writing to it can run further ahead of the sidecar: each read
// then returns more lines (fewer reads and context switches per line), and
// the app's writes find room while the sidecar is not reading yet. The
// stdin transport grows its pipe when it starts; package atstart does it
// as the process starts, long before that.
package stdinpipe

// Size is the kernel pipe buffer asked for: ~110 ms of a writer at 100k
// pino lines/s.
const Size = 1 << 20
