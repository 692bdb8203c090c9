package main

// The entry points Fluent Bit's Go proxy looks up (see main.go). This file
// needs cgo; without it the package still builds and its tests skip.

import (
	"C"
	"sync"
	"unsafe"

	"github.com/fluent/fluent-bit-go/output"
	"go.uber.org/zap"
)

//export FLBPluginRegister
func FLBPluginRegister(def unsafe.Pointer) int {
	return output.FLBPluginRegister(def, pluginName, "Axiom: events shaped as the sidecar ships them")
}

//export FLBPluginInit
func FLBPluginInit(plugin unsafe.Pointer) int {
	id := newID()
	name := instanceName(id)
	ilog := log.With(zap.String("instance", name))
	cfg, err := readConfig(func(key string) string { return output.FLBPluginConfigKey(plugin, key) })
	if err != nil {
		ilog.Error("configuration", zap.Error(err))
		return output.FLB_ERROR
	}
	ilog = ilog.With(zap.String("dataset", cfg.axiom.LogsDataset))
	in, err := newInstance(name, cfg, ilog)
	if err != nil {
		ilog.Error("start", zap.Error(err))
		return output.FLB_ERROR
	}
	put(id, in)
	output.FLBPluginSetContext(plugin, id)
	ilog.Info("ready", zap.Bool("sampling", cfg.sampling != nil))
	return output.FLB_OK
}

//export FLBPluginFlushCtx
func FLBPluginFlushCtx(ctx, data unsafe.Pointer, length C.int, tag *C.char) int {
	in := lookup(output.FLBPluginGetContext(ctx))
	if in == nil {
		log.Error("flush for an instance that is not initialised")
		return output.FLB_ERROR
	}
	// The chunk is read in place: the records are copied out before
	// flush returns, and Fluent Bit keeps the chunk until then.
	chunk := unsafe.Slice((*byte)(data), int(length))
	switch in.flush(C.GoString(tag), chunk) {
	case delivered:
		return output.FLB_OK
	case retry:
		return output.FLB_RETRY
	default:
		return output.FLB_ERROR
	}
}

//export FLBPluginExitCtx
func FLBPluginExitCtx(ctx unsafe.Pointer) int {
	if in := take(output.FLBPluginGetContext(ctx)); in != nil {
		in.exit()
	}
	return output.FLB_OK
}

// FLBPluginExit is what Fluent Bit versions without FLBPluginExitCtx call,
// once: every instance stops, in parallel, so that all fit in the grace.
//
//export FLBPluginExit
func FLBPluginExit() int {
	var wg sync.WaitGroup
	for _, in := range takeAll() {
		wg.Go(in.exit)
	}
	wg.Wait()
	return output.FLB_OK
}
