package postgres

import (
	"errors"
	"fmt"

	"github.com/golang-migrate/migrate/v4"
	pgxmigrate "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/petal-near/petal/migrations"
)

// Migrator applies the embedded migrations to one database. Close it: the pgx
// driver holds a connection until then.
type Migrator struct {
	m *migrate.Migrate
}

// NewMigrator opens a migrator on url (a URL or a key=value DSN).
func NewMigrator(url string) (*Migrator, error) {
	connCfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("migrate: parse database url: %w", err)
	}
	db := stdlib.OpenDB(*connCfg)
	driver, err := pgxmigrate.WithInstance(db, &pgxmigrate.Config{})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("migrate: connect: %w", err)
	}
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("migrate: read embedded files: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", driver)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return &Migrator{m: m}, nil
}

// Up applies every pending migration. Nothing pending is not an error.
func (g *Migrator) Up() error { return ignoreNoChange(g.m.Up()) }

// Down reverts n migrations; n <= 0 reverts all of them.
func (g *Migrator) Down(n int) error {
	if n <= 0 {
		return ignoreNoChange(g.m.Down())
	}
	return ignoreNoChange(g.m.Steps(-n))
}

// Version is the applied version, and whether a failed migration left it dirty.
// A database with no migrations is version 0.
func (g *Migrator) Version() (uint, bool, error) {
	v, dirty, err := g.m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	return v, dirty, err
}

// Force sets the version without running anything, to recover from a dirty state.
func (g *Migrator) Force(v int) error { return g.m.Force(v) }

// Close releases the connection (and the *sql.DB under it).
func (g *Migrator) Close() error {
	srcErr, dbErr := g.m.Close()
	return errors.Join(srcErr, dbErr)
}

func ignoreNoChange(err error) error {
	if errors.Is(err, migrate.ErrNoChange) {
		return nil
	}
	return err
}

// MigrateUp applies pending migrations to url and closes the migrator.
func MigrateUp(url string) (err error) {
	g, err := NewMigrator(url)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, g.Close()) }()
	return g.Up()
}

// EmbeddedVersion is the newest migration this binary carries.
func EmbeddedVersion() (uint, error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return 0, err
	}
	defer func() { _ = src.Close() }()
	v, err := src.First()
	if err != nil {
		return 0, err
	}
	for {
		next, err := src.Next(v)
		if err != nil {
			// fs.ErrNotExist: v is the last.
			return v, nil
		}
		v = next
	}
}

// CheckSchema fails unless the database at url holds every migration this
// binary carries, cleanly: with PETAL_MIGRATE=off, a replica started before
// its migrations were applied says so plainly instead of failing on a missing
// table. A newer schema is fine (an older replica during a rollout).
func CheckSchema(url string) (err error) {
	want, err := EmbeddedVersion()
	if err != nil {
		return err
	}
	g, err := NewMigrator(url)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, g.Close()) }()
	have, dirty, err := g.Version()
	if err != nil {
		return err
	}
	switch {
	case dirty:
		return fmt.Errorf("the database schema is dirty at version %d (a migration failed): fix it, then petal migrate force V", have)
	case have < want:
		return fmt.Errorf("the database schema is at version %d and this petal needs %d: run petal migrate up first, or start with PETAL_MIGRATE=on", have, want)
	}
	return nil
}
