package distribution

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layoutRow is a folder cell of README.md's Layout table: | `path/` | ... |
var layoutRow = regexp.MustCompile("(?m)^\\| `([^`]+)/` \\|")

// TestReadmeLayoutMatchesTheTree checks that README.md's Layout table names
// only folders that exist, and covers every top-level folder and every
// folder holding Go code (a row covers the folders below it), so a newcomer
// finds every package in one hop from the front door.
func TestReadmeLayoutMatchesTheTree(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	if i := strings.Index(section, "\n## Layout"); i >= 0 {
		section = section[i:]
	} else {
		t.Fatal("README.md has no Layout section")
	}
	var rows []string
	for _, m := range layoutRow.FindAllStringSubmatch(section, -1) {
		rows = append(rows, m[1])
		if st, err := os.Stat(filepath.Join(root, m[1])); err != nil || !st.IsDir() {
			t.Errorf("README Layout names %s/, which is not a folder", m[1])
		}
	}
	covered := func(dir string) bool {
		for _, r := range rows {
			if dir == r || strings.HasPrefix(dir, r+"/") {
				return true
			}
		}
		return false
	}
	// A top-level folder is also covered by rows for folders inside it.
	listed := func(top string) bool {
		for _, r := range rows {
			if r == top || strings.HasPrefix(r, top+"/") {
				return true
			}
		}
		return false
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch name := d.Name(); {
			case rel == ".":
				return nil
			case strings.HasPrefix(name, "."), name == "node_modules", name == "testdata":
				return filepath.SkipDir
			case !strings.Contains(rel, "/") && !listed(rel):
				t.Errorf("README Layout has no row for the top-level folder %s/", rel)
			}
			return nil
		}
		if dir := filepath.ToSlash(filepath.Dir(rel)); strings.HasSuffix(rel, ".go") &&
			!strings.HasSuffix(rel, "_test.go") && !covered(dir) {
			t.Errorf("README Layout has no row for %s/, which holds Go code", dir)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
