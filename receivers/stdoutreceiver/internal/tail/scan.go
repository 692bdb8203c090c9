package tail

// Scanning for the files to follow: the include and exclude globs, files
// rotated away that are let go once read to their end, and files rotated
// while the sidecar was down. file.go follows one file.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/sidecarhq/sidecar/receivers/stdoutreceiver/internal/stream"
)

// glob finds the files to follow, opens new ones and lets go of rotated
// files that are read to their end.
func (t *Tailer) glob(ctx context.Context) {
	t.lastGlob = time.Now()
	var paths []string
	for _, pattern := range t.cfg.Include {
		m, _ := filepath.Glob(pattern) // patterns are validated
		paths = append(paths, m...)
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)

	for _, f := range t.files {
		f.seen = false
	}
	matched := make(map[fileID]string, len(paths))
	ids := make([]fileID, 0, len(paths))
	for _, path := range paths {
		if t.excluded(path) {
			continue
		}
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		id := idOf(st)
		if _, dup := matched[id]; !dup { // two globs or a symlink to the same file
			matched[id] = path
			ids = append(ids, id)
		}
	}
	if !t.polled && t.resumed {
		t.recoverRotated(matched)
	}
	skipped := 0
	for _, id := range ids {
		path := matched[id]
		if f, ok := t.byID[id]; ok {
			f.seen = true
			if f.path != path { // renamed: follow the inode, report its new name
				f.path = path
				f.attrs = []stream.Attr{{Key: stream.AttrFilePath, Value: path}}
			}
			continue
		}
		if len(t.files) >= t.cfg.MaxOpenFiles {
			skipped++
			continue
		}
		t.open(path, id)
	}
	if skipped > 0 && t.fullWarns < 10 {
		t.fullWarns++
		t.set.Logger.Warn("Not following some matched files: max_open_files reached",
			zap.Int("skipped", skipped), zap.Int("max_open_files", t.cfg.MaxOpenFiles))
	}
	t.polled = true

	// A file no glob matches any more (rotated away, deleted) is let go once
	// it is read to its end and did not grow for rotateWait: the runtime
	// may still write to it for a moment after the rename.
	kept := t.files[:0]
	for _, f := range t.files {
		size := f.size()
		switch {
		case f.seen:
			f.goneAt = time.Time{}
		case f.goneAt.IsZero():
			f.goneAt = t.lastGlob
		case f.atEOF && size == f.globSize && t.lastGlob.Sub(f.goneAt) >= rotateWait:
			if err := t.read(ctx, f, true); err == nil {
				t.closeFile(f)
				continue
			}
		}
		f.globSize = size
		kept = append(kept, f)
	}
	clear(t.files[len(kept):])
	t.files = kept
}

// recoverRotated finds the files of the previous run that were rotated
// while the sidecar was down: no glob matches them any more, but kubelet and
// logrotate leave them beside their old path. They are followed again (as
// rotated files, before the new ones) so that their last lines are not lost.
func (t *Tailer) recoverRotated(matched map[fileID]string) {
	lost := map[fileID]string{}
	for _, e := range t.known {
		id := fileID{dev: e.Dev, ino: e.Ino}
		if _, ok := matched[id]; ok {
			continue
		}
		// A symlink (/var/log/containers/*.log) now points to the new file,
		// beside the rotated one.
		path := e.Path
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
		lost[id] = filepath.Dir(path)
	}
	dirs := map[string]bool{}
	for _, dir := range lost {
		if dirs[dir] {
			continue
		}
		dirs[dir] = true
		entries, _ := os.ReadDir(dir)
		for _, de := range entries {
			info, err := de.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			id := idOf(info)
			if lost[id] == dir && t.byID[id] == nil {
				if f := t.open(filepath.Join(dir, de.Name()), id); f != nil && !f.resumed {
					t.closeFile(f) // inode reused by another file: not ours
					t.files = t.files[:len(t.files)-1]
				} else if f != nil {
					f.seen = false
				}
			}
		}
	}
}

func (t *Tailer) excluded(path string) bool {
	for _, pattern := range t.cfg.Exclude {
		if ok, _ := filepath.Match(pattern, path); ok {
			return true
		}
	}
	return false
}
