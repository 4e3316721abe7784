DROP TABLE receipt_mails;
