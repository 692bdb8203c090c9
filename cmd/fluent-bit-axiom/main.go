// Command fluent-bit-axiom is the Fluent Bit output plugin `axiom`, built
// with -buildmode=c-shared as out_axiom.so. Each [OUTPUT] instance turns
// Fluent Bit's chunks into the events the sidecar makes of the same Fluent
// Forward records (the stdout receiver's record decoding, the sampling
// processor with Rules_File, the axiom exporter) and answers each flush by
// Axiom's answer: FLB_OK once accepted, FLB_RETRY for what is worth retrying
// (Fluent Bit keeps the chunk), FLB_ERROR for a permanent rejection. See
// README.md.
//
// The exported functions are the entry points Fluent Bit's Go proxy
// (src/proxy/go/go.c) looks up: FLBPluginRegister once, FLBPluginInit per
// instance, FLBPluginFlushCtx per chunk, FLBPluginExitCtx per instance at
// exit (FLBPluginExit on Fluent Bit versions without it).
package main

import "sync"

// pluginName is the output's name in [OUTPUT] Name.
const pluginName = "axiom"

// The running instances by id, the context Fluent Bit hands back with
// every flush and at exit.
var (
	mu        sync.Mutex
	instances = map[int]*instance{}
	nextID    int
	log       = newLogger()
)

func newID() int {
	mu.Lock()
	defer mu.Unlock()
	nextID++
	return nextID
}

func put(id int, in *instance) {
	mu.Lock()
	defer mu.Unlock()
	instances[id] = in
}

func lookup(ctx any) *instance {
	id, _ := ctx.(int)
	mu.Lock()
	defer mu.Unlock()
	return instances[id]
}

// take removes the instance of ctx; nil when there is none.
func take(ctx any) *instance {
	id, _ := ctx.(int)
	mu.Lock()
	defer mu.Unlock()
	in := instances[id]
	delete(instances, id)
	return in
}

func takeAll() map[int]*instance {
	mu.Lock()
	defer mu.Unlock()
	all := instances
	instances = map[int]*instance{}
	return all
}

// main is never run: Fluent Bit loads the package as a shared library.
func main() {}
