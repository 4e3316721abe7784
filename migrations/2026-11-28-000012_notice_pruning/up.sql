-- The sweep forgets processor event ids by age (Checkout::forget_processor_notices).
CREATE INDEX processor_notices_absorbed_at ON processor_notices (absorbed_at);
