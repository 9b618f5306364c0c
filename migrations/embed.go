// Package migrations embeds petal's SQL migrations, applied by golang-migrate
// at start-up and by `petal migrate`. Files are numbered in one sequence,
// 1, 2, 3 …: a new migration always takes the next number, because
// golang-migrate never applies a file numbered below a database's version.
package migrations

import "embed"

// FS holds every *.sql file of this folder.
//
//go:embed *.sql
var FS embed.FS
