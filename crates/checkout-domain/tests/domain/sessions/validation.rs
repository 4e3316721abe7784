//! Rule 7.4.3: validation.

use crate::*;

#[tokio::test]
async fn an_amount_not_greater_than_zero_is_a_validation_error_on_that_field() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    for amount in ["0", "-10.00"] {
        let request = SessionRequest {
            total_transaction_amount: Some(d(amount)),
            ..start_request("ORD-1")
        };
        let result = kit.checkout.start_payment(&caller, &request).await;
        assert_eq!(validation_keys(result), ["TotalTransactionAmount"]);

        let request = SessionRequest {
            total_transaction_amount: Some(d(amount)),
            ..link_request("ORD-1")
        };
        let result = kit.checkout.generate_payment_link(&caller, &request).await;
        assert_eq!(validation_keys(result), ["TotalTransactionAmount"]);
    }
    assert!(kit.sessions.is_empty());
}

#[tokio::test]
async fn a_missing_required_field_is_a_validation_error_on_that_field() {
    let kit = TestKit::new();
    let caller = kit.caller("T-1");
    let request = SessionRequest {
        callback_success_url: None,
        ..start_request("ORD-1")
    };
    let result = kit.checkout.start_payment(&caller, &request).await;
    assert_eq!(validation_keys(result), ["CallbackSuccessUrl"]);

    let request = SessionRequest {
        transaction_reference_number: None,
        ..start_request("ORD-1")
    };
    let result = kit.checkout.start_payment(&caller, &request).await;
    assert_eq!(validation_keys(result), ["TransactionReferenceNumber"]);

    let request = SessionRequest {
        user_email: None,
        ..link_request("ORD-1")
    };
    let result = kit.checkout.generate_payment_link(&caller, &request).await;
    assert_eq!(validation_keys(result), ["UserEmail"]);
    assert!(kit.sessions.is_empty());
}
