-- AlterTable
ALTER TABLE "McpSession" ADD COLUMN     "elicits" BOOLEAN NOT NULL DEFAULT false;

