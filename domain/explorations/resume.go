package explorations

import (
	"fmt"
	"strings"
	"time"
)

// ResumePacket is an exploration as markdown, for an agent that can only
// fetch a URL: what it asks, what was done, and how to go on through the
// link that fetched it (base is the site's address, token the link's).
func ResumePacket(e Exploration, steps []Step, notes []Note, access Access, base, token string) string {
	var b strings.Builder
	title := e.Title
	if title == "" {
		title = e.Question
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLine(title))
	fmt.Fprintf(&b, "An exploration on petal, opened %s, last changed %s.\n\n", day(e.CreatedAt), day(e.UpdatedAt))
	fmt.Fprintf(&b, "## Question\n\n%s\n\n", e.Question)
	b.WriteString("## Steps\n\n")
	if len(steps) == 0 {
		b.WriteString("None yet.\n\n")
	}
	for _, s := range steps {
		fmt.Fprintf(&b, "%d. spec `%s` (%s)", s.Seq, s.SpecSHA256, day(s.CreatedAt))
		if s.Note != "" {
			fmt.Fprintf(&b, ": %s", oneLine(s.Note))
		}
		b.WriteString("\n")
		if len(s.Spec) > 0 {
			fmt.Fprintf(&b, "\n   ```json\n   %s\n   ```\n", s.Spec)
		}
	}
	if len(steps) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("## Notes\n\n")
	if len(notes) == 0 {
		b.WriteString("None yet.\n\n")
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "- %s (%s)\n", oneLine(n.Text), day(n.CreatedAt))
	}
	if len(notes) > 0 {
		b.WriteString("\n")
	}
	api := strings.TrimRight(base, "/") + "/api/v1/explorations/" + token
	b.WriteString("## Going on\n\n")
	fmt.Fprintf(&b, "This link can %s. Read the whole exploration as JSON: `GET %s`.\n", accessVerb(access), api)
	if access >= ContinueAccess {
		fmt.Fprintf(&b, "Save a step: `POST %s/steps` with `{\"spec\": {…}}` or `{\"spec_sha256\": \"…\", \"note\": \"…\"}`.\n", api)
		fmt.Fprintf(&b, "Add a note: `POST %s/notes` with `{\"text\": \"…\"}`.\n", api)
		fmt.Fprintf(&b, "Post a reading made on your machine: `PUT %s/snapshots/<sha256>` with the snapshot as the body.\n", api)
	}
	return b.String()
}

func accessVerb(a Access) string {
	if a >= ContinueAccess {
		return "read and continue this exploration"
	}
	return "read this exploration, not change it"
}

func day(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// oneLine keeps a person's text from breaking the packet's markdown structure.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
