-- CreateTable
CREATE TABLE "ChangeEvent" (
    "id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "namespace" TEXT,
    "time" TIMESTAMP(3) NOT NULL,
    "data" JSONB NOT NULL,

    CONSTRAINT "ChangeEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WebhookSubscription" (
    "name" TEXT NOT NULL,
    "fromSeq" INTEGER NOT NULL,
    "scannedSeq" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WebhookSubscription_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "EventDelivery" (
    "subscription" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "eventId" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL,
    "lastError" TEXT,
    "deliveredAt" TIMESTAMP(3),

    CONSTRAINT "EventDelivery_pkey" PRIMARY KEY ("subscription","seq")
);

-- CreateIndex
CREATE UNIQUE INDEX "ChangeEvent_seq_key" ON "ChangeEvent"("seq");

-- CreateIndex
CREATE INDEX "ChangeEvent_type_seq_idx" ON "ChangeEvent"("type", "seq");

-- CreateIndex
CREATE INDEX "ChangeEvent_subject_seq_idx" ON "ChangeEvent"("subject", "seq");

-- CreateIndex
CREATE INDEX "EventDelivery_subscription_state_seq_idx" ON "EventDelivery"("subscription", "state", "seq");

