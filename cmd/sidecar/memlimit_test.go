package main

import (
	"os"
	"path/filepath"
	"testing"
)

func writeCgroupFile(t *testing.T, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCgroupMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		proc   string
		files  map[string]string
		want   int64
		wantOK bool
	}{
		{"v2 in a container (namespaced root)", "0::/\n", map[string]string{"memory.max": "134217728\n"}, 128 << 20, true},
		{"v2 on a host, named path", "0::/kubepods/pod1/c1\n", map[string]string{"kubepods/pod1/c1/memory.max": "268435456\n", "memory.max": "max\n"}, 256 << 20, true},
		{"v2 without a limit", "0::/\n", map[string]string{"memory.max": "max\n"}, 0, false},
		{"v1 in a container", "12:memory:/docker/abc\n0::/\n", map[string]string{"memory/memory.limit_in_bytes": "536870912\n"}, 512 << 20, true},
		{"v1 without a limit", "4:memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "9223372036854771712\n"}, 0, false},
		{"v1 with other controllers on the line", "4:cpu,memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "1048576\n"}, 1 << 20, true},
		{"no cgroup files", "0::/\n", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, content := range tc.files {
				writeCgroupFile(t, root, rel, content)
			}
			got, ok := cgroupMemoryLimit(root, []byte(tc.proc))
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("got %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
