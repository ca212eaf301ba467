-- When the current streak of permanently failed webhook deliveries began (NULL while
-- deliveries succeed), so operators are notified once per streak, not once per event.
ALTER TABLE "webhooks" ADD COLUMN "failing_since" TIMESTAMPTZ(3);
