-- CreateTable
CREATE TABLE "ChangeEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "namespace" TEXT,
    "time" DATETIME NOT NULL,
    "data" JSONB NOT NULL
);

-- CreateTable
CREATE TABLE "WebhookSubscription" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "fromSeq" INTEGER NOT NULL,
    "scannedSeq" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "EventDelivery" (
    "subscription" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "eventId" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL,
    "lastError" TEXT,
    "deliveredAt" DATETIME,

    PRIMARY KEY ("subscription", "seq")
);

-- CreateIndex
CREATE UNIQUE INDEX "ChangeEvent_seq_key" ON "ChangeEvent"("seq");

-- CreateIndex
CREATE INDEX "ChangeEvent_type_seq_idx" ON "ChangeEvent"("type", "seq");

-- CreateIndex
CREATE INDEX "ChangeEvent_subject_seq_idx" ON "ChangeEvent"("subject", "seq");

-- CreateIndex
CREATE INDEX "EventDelivery_subscription_state_seq_idx" ON "EventDelivery"("subscription", "state", "seq");

