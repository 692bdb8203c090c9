package main

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/sidecarhq/sidecar/bench/internal/cachegrind"
)

// countInstructions counts the instructions per line that the sidecar (its
// memory-queue run) and `zstd -1 -T1` execute on the same bytes, under
// valgrind's cachegrind with the cache simulation off (it only counts).
// Each runs over lines and over lines/5 of the same input, and the
// difference of the two counts over the difference in lines is the figure:
// startup and shutdown fall out. The count depends neither on the host's
// speed nor on its load, so two builds can be compared on a busy machine;
// it is not CPU time (instructions differ in cost: zstd's retire more per
// cycle than the sidecar's), so the ratio to zstd here is a different
// measure from the CPU-time ratio of a timed run.
func countInstructions(sidecar string, lines, procs int, keep, disk bool) error {
	small := lines / 5
	if small < 1000 {
		return fmt.Errorf("-valgrind needs -lines of at least 5000, got %d", lines)
	}
	dir, removeDir, err := workDir("logpath-valgrind-", keep)
	if err != nil {
		return err
	}
	defer removeDir()
	n := min(lines, blockLines)
	block, avg := pinoBlock(n)
	fmt.Printf("input: %d and %d pino lines, %.0f bytes/line; instructions counted by valgrind (cachegrind, no cache simulation)\n",
		lines, small, avg)

	subjects := []counted{
		// zstd -T1 compresses in a worker thread, in jobs cut where the
		// input happened to be when it flushed: its count varies by a few
		// percent from run to run, so it is the median of three runs.
		{"zstd -1 -T1 (compression floor)", "zstd", 3, func(lines int, wrap []string) error {
			in := repeatedInput{block: block, blockLines: n, lines: lines}
			args := append(slices.Clone(wrap), "zstd", "-1", "-T1", "-c")
			_, err := measure("zstd", command(args[0], args[1:]...), in)
			return err
		}},
		{fmt.Sprintf("sidecar, memory queue (GOMAXPROCS=%d)", procs), "sidecar", 1, func(lines int, wrap []string) error {
			in := repeatedInput{block: block, blockLines: n, lines: lines}
			_, err := runSidecar(sidecar, "memory queue", "", lines, procs, keep, in, wrap)
			return err
		}},
	}
	if disk {
		subjects = append(subjects, counted{fmt.Sprintf("sidecar, disk buffer (GOMAXPROCS=%d)", procs), "sidecar-disk", 1, func(lines int, wrap []string) error {
			in := repeatedInput{block: block, blockLines: n, lines: lines}
			_, err := runSidecar(sidecar, "disk buffer", "state", lines, procs, keep, in, wrap)
			return err
		}})
	}
	perLine, err := countPerLine(dir, subjects, small, lines)
	if err != nil {
		return err
	}
	fmt.Printf("\nsidecar: %.2fx the instructions per line of zstd -1 -T1 (instructions, not CPU time)\n", perLine[1]/perLine[0])
	if disk {
		fmt.Printf("disk buffer: %.2fx the instructions per line of the memory queue (user space only)\n", perLine[2]/perLine[1])
	}
	if keep {
		fmt.Printf("cachegrind's files (cg_annotate: instructions by function and line) are in %s\n", dir)
	}
	return nil
}

// counted is one process whose instructions per line are counted: run
// runs it over lines lines under wrap (valgrind), runs times per count (the
// median is taken); key names its cachegrind files.
type counted struct {
	name, key string
	runs      int
	run       func(lines int, wrap []string) error
}

// countPerLine counts each subject over small and large lines and prints
// and returns the instructions per line: the difference of the two counts
// over the difference in lines, so startup and shutdown fall out.
func countPerLine(dir string, subjects []counted, small, large int) ([]float64, error) {
	perLine := make([]float64, len(subjects))
	fmt.Printf("\n%-52s %18s %18s %16s\n", "process", fmt.Sprintf("instr. (%d)", small), fmt.Sprintf("instr. (%d)", large), "instr. per line")
	for i, s := range subjects {
		var counts [2]int64
		for j, l := range [2]int{small, large} {
			runs := make([]int64, s.runs)
			for k := range runs {
				out := filepath.Join(dir, fmt.Sprintf("cachegrind.%s.%d.%d", s.key, l, k))
				wrap := []string{"valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=" + out, "--log-file=" + out + ".log"}
				if err := s.run(l, wrap); err != nil {
					return nil, fmt.Errorf("%s under valgrind: %w", s.name, err)
				}
				var err error
				if runs[k], err = cachegrind.InstructionRefs(out + ".log"); err != nil {
					return nil, err
				}
			}
			slices.Sort(runs)
			counts[j] = runs[len(runs)/2]
		}
		perLine[i] = float64(counts[1]-counts[0]) / float64(large-small)
		fmt.Printf("%-52s %18d %18d %16.0f\n", s.name, counts[0], counts[1], perLine[i])
	}
	return perLine, nil
}
