// Package cachegrind reads what valgrind's cachegrind tool reports, for the
// bench scripts that count instructions instead of timing (bench/logpath,
// bench/spanpath).
package cachegrind

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

var irefs = regexp.MustCompile(`I\s+refs:\s+([0-9,]+)`)

// InstructionRefs reads the instruction count from a cachegrind log (its
// "I refs:" line).
func InstructionRefs(log string) (int64, error) {
	b, err := os.ReadFile(log)
	if err != nil {
		return 0, err
	}
	m := irefs.FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no instruction count in %s", log)
	}
	return strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
}
