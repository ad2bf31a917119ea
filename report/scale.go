package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/zkherd/zkherd/internal/format"
)

// ScaleModel is a sweep's model against its measurements: per recipe,
// the measured runs at each client count and what the fitted model says
// there and beyond.
type ScaleModel struct {
	Recipes []ScaleRecipe `json:"recipes"`
}

// ScaleRecipe is one recipe's model and points.
type ScaleRecipe struct {
	// Name is the step's name (herd, fair); Recipe the recipe.
	Name   string `json:"name"`
	Recipe string `json:"recipe"`
	// Shape is the model's form: "linear" or "constant".
	Shape string `json:"shape"`
	// PacketsModel and ThroughputModel are the fitted formulas, N the
	// clients.
	PacketsModel    string `json:"packets_model"`
	ThroughputModel string `json:"throughput_model"`
	// Points are the measured client counts, then the predicted ones.
	Points []ScalePoint `json:"points"`
}

// ScalePoint is one client count: measured figures (Measured) and the
// model's.
type ScalePoint struct {
	Clients  int  `json:"clients"`
	Measured bool `json:"measured"`
	// ThroughputPerS and PacketsPerAcquisition are the measurements (-1
	// when not measured or unknown).
	ThroughputPerS        float64 `json:"throughput_per_s"`
	PacketsPerAcquisition float64 `json:"server_packets_per_acquisition"`
	// Model* are the model's values (-1 when it has none).
	ModelThroughputPerS        float64 `json:"model_throughput_per_s"`
	ModelPacketsPerAcquisition float64 `json:"model_server_packets_per_acquisition"`
	// Excluded, for a measured point left out of the fit, says why.
	Excluded string `json:"excluded,omitempty"`
}

// kind names a point's row: measured, excluded or predicted.
func (p ScalePoint) kind() string {
	switch {
	case p.Excluded != "":
		return "excluded"
	case p.Measured:
		return "measured"
	}
	return "predicted"
}

func fmtMaybe(v float64) string {
	switch {
	case v < 0 || math.IsNaN(v):
		return "-"
	case v < 10:
		return fmtNum(v, 2)
	}
	return fmtNum(v, 1)
}

// writeScale prints the scale model in the terminal summary.
func writeScale(w io.Writer, m *ScaleModel) {
	if m == nil || len(m.Recipes) == 0 {
		return
	}
	fmt.Fprintln(w, "\n== scale model: model vs measurements ==")
	for _, r := range m.Recipes {
		fmt.Fprintf(w, "%s (%s, %s model)\n", r.Name, r.Recipe, r.Shape)
		fmt.Fprint(w, wrapLine("  ", r.PacketsModel, widthOf(w)))
		fmt.Fprint(w, wrapLine("  ", r.ThroughputModel, widthOf(w)))
		fmt.Fprintf(w, "  %9s  %-9s %12s %12s %14s %14s\n", "clients", "", "throughput/s", "model", "packets/acq", "model")
		for _, p := range r.Points {
			row := fmt.Sprintf("  %9s  %-9s %12s %12s %14s %14s", format.Count(int64(p.Clients)), p.kind(),
				fmtMaybe(p.ThroughputPerS), fmtMaybe(p.ModelThroughputPerS),
				fmtMaybe(p.PacketsPerAcquisition), fmtMaybe(p.ModelPacketsPerAcquisition))
			fmt.Fprintln(w, strings.TrimRight(row, " "))
		}
		for _, p := range r.Points {
			if p.Excluded != "" {
				fmt.Fprint(w, wrapLine("  ", fmt.Sprintf("%s clients not fitted: %s", format.Count(int64(p.Clients)), p.Excluded), widthOf(w)))
			}
		}
	}
}

// scaleView is the HTML's scale model section.
type scaleView struct {
	Recipes []scaleRecipeView
	Plots   []template.HTML
}

type scaleRecipeView struct {
	Name, Recipe, Shape, PacketsModel, ThroughputModel string
	Rows                                               []scaleRow
	Excluded                                           []string
}

type scaleRow struct {
	Clients, Kind, Throughput, ModelThroughput, Packets, ModelPackets string
	Measured                                                          bool
}

func (b *builder) scaleView(m *ScaleModel) *scaleView {
	if m == nil || len(m.Recipes) == 0 {
		return nil
	}
	v := &scaleView{}
	tput := linePlot{
		Title: "Throughput against clients: measured (solid) and model (dashed)",
		X:     axis{Kind: logarithmic, Label: "clients (log scale)", Format: shortNum},
		Y:     axis{Kind: logarithmic, Label: "acquisitions per second (log scale)", Format: shortNum},
	}
	pk := linePlot{
		Title: "Server packets per acquisition against clients: measured (solid) and model (dashed)",
		X:     axis{Kind: logarithmic, Label: "clients (log scale)", Format: shortNum},
		Y:     axis{Kind: logarithmic, Label: "packets per acquisition (log scale)", Format: shortNum},
	}
	for i, r := range m.Recipes {
		rv := scaleRecipeView{Name: r.Name, Recipe: r.Recipe, Shape: r.Shape, PacketsModel: r.PacketsModel, ThroughputModel: r.ThroughputModel}
		var mt, mp, et, ep []xy
		for _, p := range r.Points {
			if p.Excluded != "" {
				rv.Excluded = append(rv.Excluded, fmt.Sprintf("%s clients not fitted: %s", format.Count(int64(p.Clients)), p.Excluded))
			}
			rv.Rows = append(rv.Rows, scaleRow{
				Clients: format.Count(int64(p.Clients)), Kind: p.kind(), Measured: p.Measured,
				Throughput: fmtMaybe(p.ThroughputPerS), ModelThroughput: fmtMaybe(p.ModelThroughputPerS),
				Packets: fmtMaybe(p.PacketsPerAcquisition), ModelPackets: fmtMaybe(p.ModelPacketsPerAcquisition),
			})
			x := float64(p.Clients)
			if p.Measured && p.ThroughputPerS > 0 {
				mt = append(mt, xy{x, p.ThroughputPerS})
			}
			if p.Measured && p.PacketsPerAcquisition > 0 {
				mp = append(mp, xy{x, p.PacketsPerAcquisition})
			}
			if p.ModelThroughputPerS > 0 {
				et = append(et, xy{x, p.ModelThroughputPerS})
			}
			if p.ModelPacketsPerAcquisition > 0 {
				ep = append(ep, xy{x, p.ModelPacketsPerAcquisition})
			}
		}
		color := palette[i%len(palette)]
		tput.Series = append(tput.Series, series{Name: r.Name + " measured", Color: color, Pts: mt},
			series{Name: r.Name + " model", Color: color, Dash: true, Pts: et})
		pk.Series = append(pk.Series, series{Name: r.Name + " measured", Color: color, Pts: mp},
			series{Name: r.Name + " model", Color: color, Dash: true, Pts: ep})
		v.Recipes = append(v.Recipes, rv)
	}
	v.Plots = []template.HTML{tput.svg(b.next()), pk.svg(b.next())}
	return v
}
