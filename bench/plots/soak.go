package main

import (
	"encoding/csv"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// drawSoak draws a bench/cmd/soak CSV (seconds,rss_mb,heap_mb,threads,...)
// as RSS and Go heap over minutes, with the OS threads below, into png.
func drawSoak(csvPath, png string) error {
	f, err := os.Open(csvPath)
	if err != nil {
		return err
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		return err
	}
	var rss, heap, threads plotter.XYs
	for _, r := range rows[1:] {
		num := func(i int) float64 { v, _ := strconv.ParseFloat(r[i], 64); return v }
		minutes := num(0) / 60
		rss = append(rss, plotter.XY{X: minutes, Y: num(1)})
		heap = append(heap, plotter.XY{X: minutes, Y: num(2)})
		threads = append(threads, plotter.XY{X: minutes, Y: num(3)})
	}
	mem := plot.New()
	mem.Title.Text = "soak: memory"
	mem.X.Label.Text = "minutes"
	mem.Y.Label.Text = "MB"
	th := plot.New()
	th.Title.Text = "soak: OS threads"
	th.X.Label.Text = "minutes"
	for _, l := range []struct {
		p    *plot.Plot
		name string
		xys  plotter.XYs
		i    int
	}{{mem, "RSS", rss, 0}, {mem, "Go heap", heap, 1}, {th, "threads", threads, 0}} {
		line, err := plotter.NewLine(l.xys)
		if err != nil {
			return err
		}
		line.Color = collectors[l.i].color
		line.Width = vg.Points(1.5)
		l.p.Add(line)
		l.p.Legend.Add(l.name, line)
	}
	for _, p := range []*plot.Plot{mem, th} {
		p.Y.Min = 0
		p.Y.Tick.Marker = wholeNumbers{}
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
	}
	img := vgimg.New(vg.Points(720), vg.Points(640))
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadX: vg.Millimeter * 3, PadY: vg.Millimeter * 3, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	grid := [][]*plot.Plot{{mem}, {th}}
	canvases := plot.Align(grid, tiles, draw.New(img))
	for i := range grid {
		grid[i][0].Draw(canvases[i][0])
	}
	out, err := os.Create(png)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
