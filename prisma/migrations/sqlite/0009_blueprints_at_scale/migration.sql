-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Blueprint" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "activeVersion" INTEGER NOT NULL,
    "latestVersion" INTEGER NOT NULL,
    "owner" TEXT NOT NULL,
    "seedDigest" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "createdBy" TEXT NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "activeBody" JSONB,
    "generation" INTEGER NOT NULL DEFAULT 0
);
INSERT INTO "new_Blueprint" ("activeVersion", "createdAt", "createdBy", "id", "latestVersion", "name", "owner", "seedDigest", "updatedAt", "updatedBy") SELECT "activeVersion", "createdAt", "createdBy", "id", "latestVersion", "name", "owner", "seedDigest", "updatedAt", "updatedBy" FROM "Blueprint";
DROP TABLE "Blueprint";
ALTER TABLE "new_Blueprint" RENAME TO "Blueprint";
CREATE UNIQUE INDEX "Blueprint_name_key" ON "Blueprint"("name");
CREATE INDEX "Blueprint_generation_id_idx" ON "Blueprint"("generation", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- Backfill (by hand): each blueprint's active body, from its version row.
UPDATE "Blueprint" SET "activeBody" = (
    SELECT v."body" FROM "BlueprintVersion" v WHERE v."blueprintId" = "Blueprint"."id" AND v."version" = "Blueprint"."activeVersion"
);
