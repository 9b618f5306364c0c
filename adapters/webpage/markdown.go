package webpage

import (
	"strings"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// What the HTML to Markdown conversion may cost. The converter indents every
// line of a list item's content once per list around it, and copies it once
// per level: 80 nested lists around a <pre> of 220,000 lines (440 KB) became
// 35 million characters in 55-70 s and ~620 MiB. So the tree is bounded
// before it is converted, by nesting and by the text it can become, and the
// conversion looks at the context at every element.
const (
	// MaxNesting is how many lists and quotes deep a page is drawn as such;
	// deeper ones are drawn as plain blocks (their text kept).
	MaxNesting = 8
	// MaxTextBytes bounds the Markdown a page can become, counting each line's
	// indentation; the rest of the page is cut, as bytes past MaxBytes are.
	MaxTextBytes = 4 << 20
)

// nestingAtoms are the elements the converter indents their content for.
var nestingAtoms = map[atom.Atom]bool{atom.Ul: true, atom.Ol: true, atom.Li: true, atom.Blockquote: true, atom.Dl: true, atom.Dd: true}

// boundTree flattens lists and quotes past MaxNesting and cuts the tree where
// its text, with the indentation it will be drawn with, passes maxText. It
// reports whether it cut. Its walk keeps its own stack: a page of 100,000
// nested elements costs no deep recursion here.
func boundTree(doc *html.Node, maxText int) bool {
	type frame struct {
		n       *html.Node
		nesting int
	}
	budget, cut := maxText, false
	stack := []frame{{doc, 0}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n, nesting := f.n, f.nesting
		if cut {
			n.Parent.RemoveChild(n)
			continue
		}
		switch n.Type {
		case html.TextNode:
			// Each level indents each line by up to 4 characters (an
			// ordered list's "10. "), and a line ends in a newline.
			perLine := 4*nesting + 1
			if cost := len(n.Data) + (strings.Count(n.Data, "\n")+1)*perLine; cost <= budget {
				budget -= cost
				continue
			}
			// The text is cut at the last line that fits.
			at := 0
			for at < len(n.Data) {
				end := strings.IndexByte(n.Data[at:], '\n')
				if end < 0 {
					end = len(n.Data) - at
				}
				if budget -= end + perLine; budget < 0 {
					break
				}
				at += end + 1
			}
			n.Data = n.Data[:min(at, len(n.Data))]
			cut = true
			continue
		case html.ElementNode:
			if nestingAtoms[n.DataAtom] {
				if nesting >= MaxNesting {
					n.DataAtom, n.Data = atom.Div, "div"
				} else if n.DataAtom == atom.Li || n.DataAtom == atom.Blockquote || n.DataAtom == atom.Dd {
					nesting++
				}
			}
		}
		// Children pushed last first, so they are visited in order.
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, frame{c, nesting})
		}
	}
	return cut
}

// stopWhenDone is a render handler ahead of every other: once the
// conversion's context (the read's, given through WithContext) is done it
// draws each element as nothing, so the conversion ends at once instead of
// running past the read's deadline (the converter itself never looks).
func stopWhenDone(ctx htmltomarkdown.Context, _ htmltomarkdown.Writer, _ *html.Node) htmltomarkdown.RenderStatus {
	if ctx.Err() != nil {
		return htmltomarkdown.RenderSuccess
	}
	return htmltomarkdown.RenderTryNext
}
