-- The marks showing an SVG logo lose their mark and are read again at once
-- (without SVG, their logo is refused); then the SVGs go.
UPDATE map_marks SET mark = NULL, logo_sha256 = NULL, changed_at = now(), next_at = now()
WHERE logo_sha256 IN (SELECT sha256 FROM media WHERE media_type = 'image/svg+xml');
DELETE FROM media WHERE media_type = 'image/svg+xml';
ALTER TABLE media DROP CONSTRAINT media_media_type_check;
ALTER TABLE media ADD CONSTRAINT media_media_type_check
    CHECK (media_type IN ('image/png', 'image/jpeg', 'image/webp'));
