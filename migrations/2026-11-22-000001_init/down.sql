DROP TABLE payment_attempts;
DROP TABLE session_charges;
DROP TABLE session_items;
DROP TABLE payment_sessions;
DROP TABLE oauth_clients;
DROP TABLE terminals;
