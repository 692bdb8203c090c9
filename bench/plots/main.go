// Command plots draws, for every benchmark scenario, throughput and RSS over
// time of the sidecar and the stock collector in the max-rate phase, from
// the CSV series bench/cmd/benchrun wrote. It has its own module so that
// the plotting library stays out of the product's dependencies.
//
//	go run . -results ../results
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func main() {
	results := flag.String("results", "bench/results", "directory holding <scenario>-<collector>-max.csv")
	soak := flag.String("soak", "", "draw this bench/cmd/soak CSV instead, into the same name with .png")
	flag.Parse()
	if *soak != "" {
		if err := drawSoak(*soak, strings.TrimSuffix(*soak, ".csv")+".png"); err != nil {
			fmt.Fprintln(os.Stderr, "plots:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*results); err != nil {
		fmt.Fprintln(os.Stderr, "plots:", err)
		os.Exit(1)
	}
}

var collectors = []struct {
	name  string
	color color.Color
}{
	{"sidecar", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
	{"baseline", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
}

func run(dir string) error {
	matches, err := filepath.Glob(filepath.Join(dir, "*-sidecar-max.csv"))
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		return fmt.Errorf("no *-sidecar-max.csv in %s", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		return err
	}
	for _, m := range matches {
		scenario := strings.TrimSuffix(filepath.Base(m), "-sidecar-max.csv")
		if err := drawScenario(dir, scenario); err != nil {
			return fmt.Errorf("%s: %w", scenario, err)
		}
	}
	return nil
}

func drawScenario(dir, scenario string) error {
	rate := plot.New()
	rate.Title.Text = scenario + ": events/s (max rate, collector on one core)"
	rate.X.Label.Text = "seconds"
	rate.Y.Label.Text = "events/s"
	rss := plot.New()
	rss.Title.Text = scenario + ": RSS"
	rss.X.Label.Text = "seconds"
	rss.Y.Label.Text = "MB"
	for _, c := range collectors {
		s, err := readSeries(filepath.Join(dir, fmt.Sprintf("%s-%s-max.csv", scenario, c.name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, l := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{rate, s.rate}, {rss, s.rss}} {
			line, err := plotter.NewLine(l.xys)
			if err != nil {
				return err
			}
			line.Color = c.color
			line.Width = vg.Points(1.5)
			l.p.Add(line)
			l.p.Legend.Add(c.name, line)
		}
	}
	for _, p := range []*plot.Plot{rate, rss} {
		p.Y.Tick.Marker = wholeNumbers{}
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
	}

	img := vgimg.New(vg.Points(720), vg.Points(640))
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadX: vg.Millimeter * 3, PadY: vg.Millimeter * 3, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	grid := [][]*plot.Plot{{rate}, {rss}}
	canvases := plot.Align(grid, tiles, draw.New(img))
	for i := range grid {
		grid[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(filepath.Join(dir, "plots", scenario+".png"))
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// wholeNumbers labels ticks like plot.DefaultTicks, without decimals.
type wholeNumbers struct{}

func (wholeNumbers) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', 0, 64)
		}
	}
	return ticks
}

type series struct{ rate, rss plotter.XYs }

// readSeries reads a benchrun CSV (t_s,sent,sink_logs,sink_spans,cpu_s,rss_kb).
// Throughput counts log events at the sink; for span runs, where most spans
// are sampled away, it counts spans the collector accepted.
func readSeries(path string) (series, error) {
	var s series
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return s, err
	}
	if len(rows) < 2 {
		return s, nil
	}
	num := func(r []string, i int) float64 {
		v, _ := strconv.ParseFloat(r[i], 64)
		return v
	}
	spanRun := false
	for _, r := range rows[1:] {
		if num(r, 3) > 0 {
			spanRun = true
		}
	}
	count := func(r []string) float64 {
		if spanRun {
			return num(r, 1)
		}
		return num(r, 2)
	}
	// Rates over a one-second window: sink counts move in export batches.
	j := 1
	for i := 1; i < len(rows); i++ {
		t := num(rows[i], 0)
		s.rss = append(s.rss, plotter.XY{X: t, Y: num(rows[i], 5) / 1024})
		for j < i && num(rows[j], 0) < t-1 {
			j++
		}
		if k := max(j-1, 1); num(rows[k], 0) < t {
			s.rate = append(s.rate, plotter.XY{X: t, Y: (count(rows[i]) - count(rows[k])) / (t - num(rows[k], 0))})
		}
	}
	return s, nil
}
