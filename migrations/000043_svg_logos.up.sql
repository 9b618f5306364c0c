-- A map's logo may be an SVG (docs/map.md, Marks): most NEAR tokens' icons
-- are. It is checked before it is kept (maps.CheckSVG) and served under a CSP
-- that runs nothing; a profile never shows one (its pictures stay PNG, JPEG
-- or WebP: the profile's own check, and a kept picture's type must match).
ALTER TABLE media DROP CONSTRAINT media_media_type_check;
ALTER TABLE media ADD CONSTRAINT media_media_type_check
    CHECK (media_type IN ('image/png', 'image/jpeg', 'image/webp', 'image/svg+xml'));
