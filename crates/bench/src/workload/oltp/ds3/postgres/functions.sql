-- DS3's transactions as server-side functions, and the restock trigger. Written for storbench
-- from the behaviour described in spec §3.1. Every read has DS3's PostgreSQL access path, its
-- accidents included, so an order asks of the storage what it asks in DS3: full-text queries
-- are parsed with the server's default configuration (DS3's to_tsquery without one; on an
-- 'english' server a stemmed word misses the 'simple' index, and about a third of the
-- searches find nothing), title browses search ACTOR (DS3's BROWSE_BY_TITLE does), LOGIN
-- reads the customer's whole history, and the review calls group the joined helpfulness rows
-- per review. What changes no storage work is kept better than DS3's: NEW_CUSTOMER stores AGE
-- and INCOME, the trigger's hot products are prod_id % 10000 = 0, and PURCHASE locks its
-- inventory rows in order so concurrent orders never lose a sale or deadlock.

-- LOGIN: DS3's: the customer by user name and password, then every purchase in the history
-- with the "people also bought" title (DS3 returns them all, newest or not, after a check that
-- there is one); one row with NULL titles when there is no history, no row when the user name
-- and password match nobody.
CREATE FUNCTION sb_login(p_username text, p_password text)
RETURNS TABLE (customerid bigint, title text, actor text, related_title text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_id integer;
BEGIN
    SELECT c.customerid INTO v_id
      FROM customers c
     WHERE c.username = p_username AND c.password = p_password;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT 1
                 FROM cust_hist h
                 JOIN products p ON p.prod_id = h.prod_id
                 JOIN products r ON r.prod_id = p.common_prod_id
                WHERE h.customerid = v_id) THEN
        RETURN QUERY
            SELECT v_id::bigint, p.title, p.actor, r.title
              FROM cust_hist h
              JOIN products p ON p.prod_id = h.prod_id
              JOIN products r ON r.prod_id = p.common_prod_id
             WHERE h.customerid = v_id;
    ELSE
        RETURN QUERY SELECT v_id::bigint, NULL::text, NULL::text, NULL::text;
    END IF;
END
$$;

-- NEW_CUSTOMER: the new id, or NULL when the user name is taken (checked first so a taken
-- name does not use up a serial value; ON CONFLICT covers the race).
CREATE FUNCTION sb_new_customer(
    p_firstname text, p_lastname text, p_address1 text, p_address2 text, p_city text,
    p_state text, p_zip text, p_country text, p_region integer, p_email text, p_phone text,
    p_creditcardtype integer, p_creditcard text, p_creditcardexpiration text,
    p_username text, p_password text, p_age integer, p_income integer, p_gender text)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id integer;
BEGIN
    IF EXISTS (SELECT 1 FROM customers c WHERE c.username = p_username) THEN
        RETURN NULL;
    END IF;
    INSERT INTO customers AS c (firstname, lastname, address1, address2, city, state, zip,
                                country, region, email, phone, creditcardtype, creditcard,
                                creditcardexpiration, username, password, age, income, gender)
    VALUES (p_firstname, p_lastname, p_address1, p_address2, p_city, p_state, p_zip,
            p_country, p_region, p_email, p_phone, p_creditcardtype, p_creditcard,
            p_creditcardexpiration, p_username, p_password, p_age, p_income, p_gender)
    ON CONFLICT (username) DO NOTHING
    RETURNING c.customerid INTO v_id;
    RETURN v_id;
END
$$;

-- NEW_MEMBER: true when the customer became a member, false when already one.
CREATE FUNCTION sb_new_member(p_customerid bigint, p_level integer)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO membership (customerid, membershiptype, expiredate)
    VALUES (p_customerid, p_level, current_date)
    ON CONFLICT (customerid) DO NOTHING;
    RETURN FOUND;
END
$$;

-- BROWSE_BY_CATEGORY: products on special in a category.
CREATE FUNCTION sb_browse_by_category(p_batch integer, p_category integer)
RETURNS SETOF products
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
        SELECT * FROM products p
         WHERE p.category = p_category AND p.special = 1
         LIMIT p_batch;
END
$$;

-- The full-text query of DS3's functions: the words joined by '&' (every word must occur),
-- parsed with the server's default text search configuration.
CREATE FUNCTION sb_words(p_words text)
RETURNS tsquery
LANGUAGE sql STABLE AS $$
    SELECT to_tsquery(replace(trim(both from p_words), ' ', '&'))
$$;

-- BROWSE_BY_ACTOR / _BY_TITLE: products whose ACTOR holds every word. Both search ACTOR, as
-- DS3's BROWSE_BY_TITLE does, so a title browse finds (almost) nothing, as in DS3.
CREATE FUNCTION sb_browse_by_actor(p_batch integer, p_actor text)
RETURNS SETOF products
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
        SELECT * FROM products p
         WHERE to_tsvector('simple', p.actor) @@ sb_words(p_actor)
         LIMIT p_batch;
END
$$;

CREATE FUNCTION sb_browse_by_title(p_batch integer, p_title text)
RETURNS SETOF products
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
        SELECT * FROM products p
         WHERE to_tsvector('simple', p.actor) @@ sb_words(p_title)
         LIMIT p_batch;
END
$$;

-- GET_PROD_REVIEWS_BY_ACTOR / _BY_TITLE, DS3's query: the first p_depth product-review rows
-- whose product's actor (or title) holds the word (DS3.5's search_depth, 500 by default),
-- joined with every helpfulness row of those reviews and grouped per review with all its
-- columns, the most helpful p_batch first; reviews nobody rated are left out by the join.
CREATE FUNCTION sb_review_search(p_batch integer, p_word text, p_depth integer, p_by_title boolean)
RETURNS TABLE (prod_id integer, title text, actor text, review_id integer, review_date date,
               stars smallint, customerid integer, review_summary text, review_text text,
               total_helpfulness bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_by_title THEN
        RETURN QUERY
            WITH t AS (SELECT p.title, p.actor, p.prod_id, r.review_date, r.stars, r.review_id,
                              r.customerid, r.review_summary, r.review_text
                         FROM products p JOIN reviews r ON p.prod_id = r.prod_id
                        WHERE to_tsvector('simple', p.title) @@ sb_words(p_word)
                        LIMIT p_depth)
            SELECT t.prod_id, t.title::text, t.actor::text, h.review_id, t.review_date, t.stars,
                   t.customerid, t.review_summary::text, t.review_text::text, sum(h.helpfulness)::bigint
              FROM reviews_helpfulness h JOIN t ON h.review_id = t.review_id
             GROUP BY t.review_id, t.prod_id, t.title, t.actor, h.review_id, t.review_date, t.stars,
                      t.customerid, t.review_summary, t.review_text
             ORDER BY 10 DESC
             LIMIT p_batch;
    ELSE
        RETURN QUERY
            WITH t AS (SELECT p.title, p.actor, p.prod_id, r.review_date, r.stars, r.review_id,
                              r.customerid, r.review_summary, r.review_text
                         FROM products p JOIN reviews r ON p.prod_id = r.prod_id
                        WHERE to_tsvector('simple', p.actor) @@ sb_words(p_word)
                        LIMIT p_depth)
            SELECT t.prod_id, t.title::text, t.actor::text, h.review_id, t.review_date, t.stars,
                   t.customerid, t.review_summary::text, t.review_text::text, sum(h.helpfulness)::bigint
              FROM reviews_helpfulness h JOIN t ON h.review_id = t.review_id
             GROUP BY t.review_id, t.prod_id, t.title, t.actor, h.review_id, t.review_date, t.stars,
                      t.customerid, t.review_summary, t.review_text
             ORDER BY 10 DESC
             LIMIT p_batch;
    END IF;
END
$$;

-- GET_PROD_REVIEWS (most helpful first), _BY_STARS (p_stars set: only that rating) and
-- _BY_DATE (p_by_date: newest first), DS3's query: a product's reviews joined with their
-- helpfulness rows and grouped per review with all its columns. One statement per variant,
-- so each is planned as DS3's is.
CREATE FUNCTION sb_get_reviews(p_batch integer, p_prod_id bigint, p_stars integer, p_by_date boolean)
RETURNS TABLE (review_id integer, prod_id integer, review_date date, stars smallint,
               customerid integer, review_summary text, review_text text,
               total_helpfulness bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_stars IS NOT NULL THEN
        RETURN QUERY
            SELECT r.review_id, r.prod_id, r.review_date, r.stars, r.customerid,
                   r.review_summary::text, r.review_text::text, sum(h.helpfulness)::bigint
              FROM reviews r JOIN reviews_helpfulness h ON r.review_id = h.review_id
             WHERE r.prod_id = p_prod_id AND r.stars = p_stars
             GROUP BY r.review_id, r.prod_id, r.review_date, r.stars, r.customerid,
                      r.review_summary, r.review_text
             ORDER BY 8 DESC
             LIMIT p_batch;
    ELSIF p_by_date THEN
        RETURN QUERY
            SELECT r.review_id, r.prod_id, r.review_date, r.stars, r.customerid,
                   r.review_summary::text, r.review_text::text, sum(h.helpfulness)::bigint
              FROM reviews r JOIN reviews_helpfulness h ON r.review_id = h.review_id
             WHERE r.prod_id = p_prod_id
             GROUP BY r.review_id, r.prod_id, r.review_date, r.stars, r.customerid,
                      r.review_summary, r.review_text
             ORDER BY r.review_date DESC
             LIMIT p_batch;
    ELSE
        RETURN QUERY
            SELECT r.review_id, r.prod_id, r.review_date, r.stars, r.customerid,
                   r.review_summary::text, r.review_text::text, sum(h.helpfulness)::bigint
              FROM reviews r JOIN reviews_helpfulness h ON r.review_id = h.review_id
             WHERE r.prod_id = p_prod_id
             GROUP BY r.review_id, r.prod_id, r.review_date, r.stars, r.customerid,
                      r.review_summary, r.review_text
             ORDER BY 8 DESC
             LIMIT p_batch;
    END IF;
END
$$;

-- NEW_PROD_REVIEW: the new review's id.
CREATE FUNCTION sb_new_review(p_prod_id bigint, p_stars integer, p_customerid bigint,
                              p_summary text, p_text text)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id integer;
BEGIN
    INSERT INTO reviews AS r (prod_id, review_date, stars, customerid, review_summary, review_text)
    VALUES (p_prod_id, current_date, p_stars, p_customerid, p_summary, p_text)
    RETURNING r.review_id INTO v_id;
    RETURN v_id;
END
$$;

-- NEW_REVIEW_HELPFULNESS: the new rating's id.
CREATE FUNCTION sb_new_helpfulness(p_review_id bigint, p_customerid bigint, p_rating integer)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id integer;
BEGIN
    INSERT INTO reviews_helpfulness AS h (review_id, customerid, helpfulness)
    VALUES (p_review_id, p_customerid, p_rating)
    RETURNING h.review_helpfulness_id INTO v_id;
    RETURN v_id;
END
$$;

-- PURCHASE: the new order id, or NULL (and nothing written) when an item is out of stock or
-- unknown. The inventory rows are locked in prod_id order (so two orders never deadlock on
-- them) and checked, summed per product, before anything is written; then the order, the
-- stock and sales, the lines (orderlineid 1..n in the caller's order) and the history go in.
CREATE FUNCTION sb_purchase(p_customerid bigint, p_net_cents bigint, p_tax_cents bigint,
                            p_total_cents bigint, p_prod_ids bigint[], p_quantities integer[])
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_item record;
    v_found integer := 0;
    v_order integer;
BEGIN
    FOR v_item IN
        SELECT i.quan_in_stock, w.quantity
          FROM inventory i
          JOIN (SELECT u.prod_id, sum(u.quantity) AS quantity
                  FROM unnest(p_prod_ids, p_quantities) AS u (prod_id, quantity)
                 GROUP BY u.prod_id) w ON w.prod_id = i.prod_id
         ORDER BY i.prod_id
           FOR UPDATE OF i
    LOOP
        IF v_item.quantity > v_item.quan_in_stock THEN
            RETURN NULL;
        END IF;
        v_found := v_found + 1;
    END LOOP;
    IF v_found < (SELECT count(DISTINCT u.p) FROM unnest(p_prod_ids) AS u (p)) THEN
        RETURN NULL;
    END IF;

    INSERT INTO orders AS o (orderdate, customerid, netamount, tax, totalamount)
    VALUES (current_date, p_customerid, round(p_net_cents / 100.0, 2), round(p_tax_cents / 100.0, 2),
            round(p_total_cents / 100.0, 2))
    RETURNING o.orderid INTO v_order;

    UPDATE inventory i
       SET quan_in_stock = i.quan_in_stock - w.quantity, sales = i.sales + w.quantity
      FROM (SELECT u.prod_id, sum(u.quantity) AS quantity
              FROM unnest(p_prod_ids, p_quantities) AS u (prod_id, quantity)
             GROUP BY u.prod_id) w
     WHERE i.prod_id = w.prod_id;

    INSERT INTO orderlines (orderlineid, orderid, prod_id, quantity, orderdate)
    SELECT u.n, v_order, u.prod_id, u.quantity, current_date
      FROM unnest(p_prod_ids, p_quantities) WITH ORDINALITY AS u (prod_id, quantity, n);

    INSERT INTO cust_hist (customerid, orderid, prod_id)
    SELECT p_customerid, v_order, u.prod_id
      FROM unnest(p_prod_ids) AS u (prod_id);

    RETURN v_order;
END
$$;

-- Restock: an update that leaves fewer than 3 in stock records a reorder and refills the
-- product to 250, or 2500 for the hot products (prod_id % 10000 = 0, as the driver and the
-- generator define them). QUAN_LOW is the stock that triggered it, QUAN_REORDERED the refill.
-- A session of a run with restocking off (storbench.no_restock = on) sells the stock out,
-- as on DS3's MySQL edition, which has no working trigger.
CREATE FUNCTION sb_restock()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_target integer := CASE WHEN NEW.prod_id % 10000 = 0 THEN 2500 ELSE 250 END;
BEGIN
    IF current_setting('storbench.no_restock', true) = 'on' THEN
        RETURN NEW;
    END IF;
    INSERT INTO reorder (prod_id, date_low, quan_low, date_reordered, quan_reordered)
    VALUES (NEW.prod_id, current_date, NEW.quan_in_stock, current_date,
            v_target - NEW.quan_in_stock);
    NEW.quan_in_stock := v_target;
    RETURN NEW;
END
$$;

CREATE TRIGGER restock
    BEFORE UPDATE OF quan_in_stock ON inventory
    FOR EACH ROW
    WHEN (NEW.quan_in_stock < 3)
    EXECUTE FUNCTION sb_restock();
