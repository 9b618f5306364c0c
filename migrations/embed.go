// Package migrations embeds petal's SQL migrations, applied by golang-migrate
// at start-up and by `petal migrate`. Files are numbered by area (1 foundation,
// 10 snapshots, 20 specs, 30 people and money, 40 runs, 50 explorations) so
// areas can add migrations without colliding; within an area, count up.
package migrations

import "embed"

// FS holds every *.sql file of this folder.
//
//go:embed *.sql
var FS embed.FS
