// Command plot draws the app's RSS over the measured load, one line per mode,
// one image per runtime, from the CSV series bench/appcost wrote. It has its
// own module so that the plotting library stays out of the product's
// dependencies.
//
//	go run . -results ../results
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

var modes = []struct {
	name  string
	color color.Color
}{
	{"direct", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
	{"otlp", color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
	{"stdout", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
}

func main() {
	results := flag.String("results", "../results", "directory holding <runtime>-<mode>.csv")
	flag.Parse()
	for _, rt := range []string{"node", "bun"} {
		if err := draw(*results, rt); err != nil {
			fmt.Fprintln(os.Stderr, "plot:", err)
			os.Exit(1)
		}
	}
}

func draw(dir, runtime string) error {
	p := plot.New()
	p.Title.Text = runtime + ": app RSS during the measured load"
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "RSS (MB)"
	p.Legend.Top = true
	for _, m := range modes {
		pts, err := series(filepath.Join(dir, runtime+"-"+m.name+".csv"))
		if err != nil {
			return err
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = m.color
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(m.name, l)
	}
	return p.Save(8*vg.Inch, 4*vg.Inch, filepath.Join(dir, runtime+"-rss.png"))
}

// series reads the seconds and app_rss_kb columns, as MB.
func series(path string) (plotter.XYs, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var pts plotter.XYs
	for _, r := range rows[1:] {
		x, err1 := strconv.ParseFloat(r[0], 64)
		kb, err2 := strconv.ParseFloat(r[1], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: bad row %v", path, r)
		}
		pts = append(pts, plotter.XY{X: x, Y: kb / 1024})
	}
	return pts, nil
}
