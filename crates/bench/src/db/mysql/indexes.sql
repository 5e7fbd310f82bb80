-- Secondary and FULLTEXT indexes, then foreign keys, after the bulk load (checks off, so the
-- foreign keys are added in place without a scan). InnoDB builds one FULLTEXT index per
-- statement. The third word names the table; statements on a table a DS2 load lacks are skipped.
ALTER TABLE customers ADD UNIQUE KEY ix_cust_username (username);
ALTER TABLE orders ADD KEY ix_order_custid (customerid);
ALTER TABLE cust_hist ADD KEY ix_cust_hist_custid_orderid (customerid, orderid);
ALTER TABLE products ADD FULLTEXT KEY ft_title (title);
ALTER TABLE products ADD FULLTEXT KEY ft_actor (actor);
ALTER TABLE products ADD KEY ix_prod_category_special (category, special), ADD KEY ix_prod_special (special), ADD KEY ix_prod_membership (membership_item), ADD KEY ix_prod_prodid_commonprodid (prod_id, common_prod_id);
ALTER TABLE reviews ADD KEY ix_reviews_prodid_date (prod_id, review_date), ADD KEY ix_reviews_prodid_stars (prod_id, stars), ADD KEY ix_reviews_custid (customerid);
ALTER TABLE reviews_helpfulness ADD KEY ix_reviews_helpfulness_reviewid (review_id, helpfulness);
ALTER TABLE cust_hist ADD CONSTRAINT fk_cust_hist_customerid FOREIGN KEY (customerid) REFERENCES customers (customerid) ON DELETE CASCADE;
ALTER TABLE orders ADD CONSTRAINT fk_orders_customerid FOREIGN KEY (customerid) REFERENCES customers (customerid) ON DELETE SET NULL;
ALTER TABLE orderlines ADD CONSTRAINT fk_orderlines_orderid FOREIGN KEY (orderid) REFERENCES orders (orderid) ON DELETE CASCADE;
ALTER TABLE membership ADD CONSTRAINT fk_membership_customerid FOREIGN KEY (customerid) REFERENCES customers (customerid) ON DELETE CASCADE;
ALTER TABLE reviews ADD CONSTRAINT fk_reviews_customerid FOREIGN KEY (customerid) REFERENCES customers (customerid) ON DELETE CASCADE;
ALTER TABLE reviews_helpfulness ADD CONSTRAINT fk_reviews_helpfulness_reviewid FOREIGN KEY (review_id) REFERENCES reviews (review_id) ON DELETE CASCADE;
