// Package textmatch ranks a small set of short documents (the brain's files,
// a list of names) against a question, in memory: words lower-cased and
// lightly stemmed, identifiers (get_policy, sputnik-dao.near) kept whole as
// well as split, BM25 over weighted fields, and the question's last word
// read as the start of words, as a search box reads a word still being
// typed (search_petals does the same in PostgreSQL). It is for hundreds of
// documents, not a corpus: the map's search is PostgreSQL's.
package textmatch

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Field is one part of a document with its weight (a title counts more than
// its body).
type Field struct {
	Text   string
	Weight float64
}

// Doc is one document to rank.
type Doc struct {
	ID     string
	Fields []Field
}

// Hit is a document's score for a question; Matched are the question's words
// it matched.
type Hit struct {
	ID      string
	Score   float64
	Matched []string
}

// Index is documents ready to rank; it never changes once built, so it may be
// shared.
type Index struct {
	ids    []string
	tf     []map[string]float64 // per document: weighted term frequency
	length []float64            // per document: weighted length
	avgLen float64
	df     map[string]int
	terms  []string // every term, sorted, for prefixes
}

// BM25's constants, the usual ones.
const (
	k1 = 1.2
	b  = 0.75
)

// New indexes docs.
func New(docs []Doc) *Index {
	ix := &Index{df: map[string]int{}}
	var total float64
	for _, d := range docs {
		tf := map[string]float64{}
		var length float64
		for _, f := range d.Fields {
			for _, w := range Words(f.Text) {
				tf[w] += f.Weight
				length += f.Weight
			}
		}
		for w := range tf {
			ix.df[w]++
		}
		ix.ids = append(ix.ids, d.ID)
		ix.tf = append(ix.tf, tf)
		ix.length = append(ix.length, length)
		total += length
	}
	if len(docs) > 0 {
		ix.avgLen = total / float64(len(docs))
	}
	for w := range ix.df {
		ix.terms = append(ix.terms, w)
	}
	sort.Strings(ix.terms)
	return ix
}

// Rank scores every document against query and answers the best n with a
// score above zero, best first (ties by id).
func (ix *Index) Rank(query string, n int) []Hit {
	words := Words(query)
	if len(words) == 0 || len(ix.ids) == 0 {
		return nil
	}
	type term struct {
		word   string
		weight float64 // 1 for a whole word, less for a prefix's completion
		prefix bool    // a completion of the last word: only the best one counts
	}
	var terms []term
	seen := map[string]bool{}
	add := func(w string, weight float64, prefix bool) {
		if !seen[w] {
			seen[w] = true
			terms = append(terms, term{w, weight, prefix})
		}
	}
	for _, w := range words {
		add(w, 1, false)
	}
	// The last word may be unfinished: the best word it starts counts a
	// little less than the word itself would.
	last := lastWord(query)
	if len(last) >= 2 {
		i := sort.SearchStrings(ix.terms, last)
		for ; i < len(ix.terms) && strings.HasPrefix(ix.terms[i], last); i++ {
			add(ix.terms[i], 0.8, true)
		}
	}
	N := float64(len(ix.ids))
	var hits []Hit
	for d := range ix.ids {
		var score, bestPrefix float64
		var matched []string
		prefixWord := ""
		for _, t := range terms {
			f := ix.tf[d][t.word]
			if f == 0 {
				continue
			}
			df := float64(ix.df[t.word])
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
			norm := f * (k1 + 1) / (f + k1*(1-b+b*ix.length[d]/ix.avgLen))
			if t.prefix {
				if s := t.weight * idf * norm; s > bestPrefix {
					bestPrefix, prefixWord = s, t.word
				}
				continue
			}
			score += t.weight * idf * norm
			matched = append(matched, t.word)
		}
		if prefixWord != "" {
			score += bestPrefix
			matched = append(matched, prefixWord)
		}
		if score > 0 {
			hits = append(hits, Hit{ID: ix.ids[d], Score: score, Matched: matched})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	if n > 0 && len(hits) > n {
		hits = hits[:n]
	}
	return hits
}

// lastWord is the query's last word, lower-cased and unstemmed (a prefix is
// matched as typed), or "" when the query ends in a space.
func lastWord(q string) string {
	if q == "" || unicode.IsSpace(rune(q[len(q)-1])) {
		return ""
	}
	parts := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !isWordRune(r) })
	if len(parts) == 0 {
		return ""
	}
	return parts[len(parts)-1]
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Words are the words of s as the index keeps them: lower case, stop words
// dropped, each stemmed; an identifier joined by _ - or . (get_policy,
// sputnik-dao.near) is kept whole too, beside its parts.
func Words(s string) []string {
	var out []string
	for _, field := range strings.Fields(strings.ToLower(s)) {
		field = strings.TrimFunc(field, func(r rune) bool { return !isWordRune(r) })
		if field == "" {
			continue
		}
		parts := strings.FieldsFunc(field, func(r rune) bool { return !isWordRune(r) })
		if len(parts) > 1 && strings.IndexFunc(field, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) >= 0 &&
			strings.IndexFunc(field, func(r rune) bool { return !isWordRune(r) && r != '_' && r != '-' && r != '.' }) < 0 {
			out = append(out, field)
		}
		for _, p := range parts {
			if stopWords[p] {
				continue
			}
			out = append(out, Stem(p))
		}
	}
	return out
}

// Stem folds an English word's common endings (plural s, -ies, -ing, -ed), so
// "proposals" meets "proposal" and "voting" meets "vote".
func Stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
		if len(w) > 2 && w[len(w)-1] == w[len(w)-2] && !strings.ContainsRune("lsz", rune(w[len(w)-1])) {
			w = w[:len(w)-1] // stopping → stop
		}
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:len(w)-1]
	}
	if len(w) > 3 {
		w = strings.TrimSuffix(w, "e") // vote, votes, voted, voting → vot
	}
	return w
}

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "in": true, "on": true, "for": true, "and": true,
	"or": true, "is": true, "are": true, "be": true, "it": true, "its": true, "this": true, "that": true, "with": true,
	"as": true, "at": true, "by": true, "from": true, "do": true, "does": true, "i": true, "me": true, "my": true,
	"what": true, "how": true, "which": true, "who": true, "when": true, "where": true, "why": true, "can": true,
	"should": true, "we": true, "you": true, "your": true, "there": true, "about": true,
}
