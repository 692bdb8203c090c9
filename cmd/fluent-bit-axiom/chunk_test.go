package main

import (
	"encoding/binary"
	"fmt"

	"github.com/tinylib/msgp/msgp"
)

// fireLensChunk is a Fluent Bit chunk of n records as FireLens makes them
// from a Node app's pino lines (container fields, source, ECS metadata),
// numbered from first. Classic entries are [EventTime, record]; v2 entries
// are [[integer time, metadata], record], as Fluent Bit 2.1+ writes them.
func fireLensChunk(v2 bool, first, n int) []byte {
	var b []byte
	sec := int64(1764504000)
	for i := first; i < first+n; i++ {
		b = msgp.AppendArrayHeader(b, 2)
		if v2 {
			b = msgp.AppendArrayHeader(b, 2)
			b = msgp.AppendInt64(b, sec+int64(i))
			b = msgp.AppendMapHeader(b, 0)
		} else {
			b = append(b, 0xd7, 0x00) // EventTime: ext 0, seconds and nanoseconds
			b = binary.BigEndian.AppendUint32(b, uint32(sec+int64(i)))
			b = binary.BigEndian.AppendUint32(b, uint32(i*1000))
		}
		b = appendFireLensRecord(b, i)
	}
	return b
}

func appendFireLensRecord(b []byte, i int) []byte {
	line := fmt.Sprintf(`{"level":30,"time":%d,"pid":7,"hostname":"ip-10-0-1-17","req":{"id":"req-%d","method":"GET","url":"/orders/%d"},"res":{"statusCode":200},"responseTime":%d.5,"msg":"request completed"}`,
		1764504000000+int64(i), i, i, i%40)
	source := "stdout"
	switch {
	case i%50 == 7:
		line = fmt.Sprintf(`{"level":50,"time":%d,"pid":7,"hostname":"ip-10-0-1-17","err":{"type":"Error","message":"connect ECONNREFUSED","stack":"Error: connect ECONNREFUSED\n    at TCPConnectWrap (node:net:1555:16)"},"msg":"query failed é中"}`, 1764504000000+int64(i))
	case i%50 == 9:
		line = "    at handler (/app/src/orders.js:42:17)"
		source = "stderr"
	}
	fields := [][2]string{
		{"container_id", "2a8f5d0e9b7c4f11a3e6d8c0b1f2e3d4-1234567890"},
		{"container_name", "app"},
		{"source", source},
		{"log", line},
		{"ecs_cluster", "prod"},
		{"ecs_task_arn", "arn:aws:ecs:eu-west-1:123456789012:task/prod/2a8f5d0e9b7c4f11a3e6d8c0b1f2e3d4"},
		{"ecs_task_definition", "shop:42"},
	}
	b = msgp.AppendMapHeader(b, uint32(len(fields)))
	for _, f := range fields {
		b = msgp.AppendString(b, f[0])
		b = msgp.AppendString(b, f[1])
	}
	return b
}
