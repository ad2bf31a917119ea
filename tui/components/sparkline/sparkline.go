// Package sparkline draws a series of values as one line of block
// characters.
package sparkline

import (
	"math"
	"strings"
)

var blocks = []rune(" ▁▂▃▄▅▆▇█")

// Render draws the last width values of series, scaled so that the largest
// shown value fills a cell (or to max, when max > 0). The result is exactly
// width cells; missing history on the left is blank.
func Render(series []float64, width int, max float64) string {
	if width <= 0 {
		return ""
	}
	if len(series) > width {
		series = series[len(series)-width:]
	}
	top := max
	if top <= 0 {
		for _, v := range series {
			top = math.Max(top, v)
		}
	}
	var b strings.Builder
	b.Grow(width * 3)
	for i := len(series); i < width; i++ {
		b.WriteByte(' ')
	}
	for _, v := range series {
		b.WriteRune(cell(v, top))
	}
	return b.String()
}

func cell(v, top float64) rune {
	if v <= 0 || top <= 0 || math.IsNaN(v) {
		return blocks[1] // a floor, so an idle series still shows as a line
	}
	i := int(math.Ceil(v / top * float64(len(blocks)-1)))
	return blocks[min(max(i, 1), len(blocks)-1)]
}

// Ints converts an int series for Render.
func Ints(series []int) []float64 {
	f := make([]float64, len(series))
	for i, v := range series {
		f[i] = float64(v)
	}
	return f
}
