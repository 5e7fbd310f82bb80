CREATE INDEX ix_prod_membership ON products (membership_item);
CREATE INDEX ix_reviews_prod_id ON reviews (prod_id);
CREATE INDEX ix_reviews_stars ON reviews (stars);
CREATE INDEX ix_reviews_prod_stars ON reviews (prod_id, stars);
CREATE INDEX ix_reviews_helpfulness_review_id ON reviews_helpfulness (review_id);
CREATE INDEX ix_reviews_helpfulness_customerid ON reviews_helpfulness (customerid);
